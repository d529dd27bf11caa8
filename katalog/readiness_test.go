package katalog

import "testing"

// readyWhen, id and dependsOn on children (kro's readyWhen and dependency
// graph): decoded in their forms, checked across the entry's declarations.
func TestChildReadinessDecodes(t *testing.T) {
	k, _, diags := loadBox(t, `
onReconcile:
  deployments:
    - id: db
      image: postgres
      readyWhen:
        - "self.status.?readyReplicas.orValue(0) > 0"
        - field: status.availableReplicas
          greaterThanOrEqual: "1"
    - name: app
      image: nginx
      dependsOn: [db]
  configMaps:
    - name: c
      dependsOn: {db: created}
`)
	wantDiags(t, diags)
	rs := k.CRDs[0].Box.Hooks[OnReconcile].Resources
	var db, app, cm *Resource
	for _, r := range rs {
		switch {
		case r.ID == "db":
			db = r
		case r.Kind == "deployments":
			app = r
		default:
			cm = r
		}
	}
	if db == nil || len(db.ReadyWhen.Exprs) != 1 || len(db.ReadyWhen.Conditions) != 1 || db.Fields.Get("id") != nil || db.Fields.Get("readyWhen") != nil {
		t.Fatalf("db = %+v", db)
	}
	if len(app.DependsOn) != 1 || app.DependsOn[0].Name != "db" || app.DependsOn[0].Condition != DependencyReady {
		t.Errorf("app dependsOn = %+v", app.DependsOn)
	}
	if len(cm.DependsOn) != 1 || cm.DependsOn[0].Condition != DependencyCreated {
		t.Errorf("configMap dependsOn = %+v", cm.DependsOn)
	}
}

func TestChildReadinessErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
onReconcile:
  deployments:
    - id: db
      image: postgres
      dependsOn: [app]
    - id: app
      image: nginx
      dependsOn: {db: ready, appp: ready}
    - id: db
      image: x
      dependsOn: {web: ready, app: healthy}
  configMaps:
    - id: 9lives
      dependsOn: [9lives]
onDelete:
  jobs:
    - image: x
      readyWhen: "self.status.succeeded > 0"
`)
	wantDiags(t, diags,
		`27:19: [site] operatorBox.onReconcile.configMaps[0].id: id "9lives" must be an identifier (letters, digits, _), such as database: dependsOn names it`,
		`25:44: [site] operatorBox.onReconcile.deployments[2].dependsOn.app: condition "healthy" is not one of ready, created`,
		`32:15: [site] operatorBox.onDelete.jobs[0].readyWhen: readyWhen does not apply to onDelete children: they are made once the custom resource is being deleted, and onDelete Jobs are already waited for; declare it on an onCreate or onReconcile child`,
		`23:19: [site] operatorBox.onReconcile.deployments[2].id: id "db" is already the id of onReconcile.deployments[0] (KATALOG:17:19); ids name one declaration each`,
		`28:27: [site] operatorBox.onReconcile.configMaps[0].dependsOn: a child cannot depend on itself`,
		`22:38: [site] operatorBox.onReconcile.deployments[1].dependsOn: dependsOn names "appp", which is not the id of a child of this entry; did you mean "app"?; give the child it waits for id: appp`,
		`25:27: [site] operatorBox.onReconcile.deployments[2].dependsOn: dependsOn names "web", which is not the id of a child of this entry (ids: 9lives, app, db); give the child it waits for id: web`,
		`19:27: [site] operatorBox.onReconcile.deployments[0].dependsOn: dependsOn makes a cycle: db → app → db; none of these children could ever be made`)
}

// An upstream waitFor says what to write instead.
func TestWaitForSaysDependsOn(t *testing.T) {
	_, _, diags := loadBox(t, `
onReconcile:
  deployments:
    - image: x
      waitFor: db
`)
	wantDiags(t, diags, `18:15: [site] operatorBox.onReconcile.deployments[0].waitFor: "waitFor" is part of the original katalog format but not supported by this runtime: give the child it waits for an id: and write dependsOn: [that id] here; readyWhen: on that child says when it is ready`)
}
