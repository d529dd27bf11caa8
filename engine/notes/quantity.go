package notes

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The quantity functions (upstream pkg/note/kube_quantity.go): Kubernetes
// resource quantities for CPU and memory arithmetic.

// ParseQuantity is a quantity as a float: "100m" → 0.1, "1Gi" → 1073741824.
func ParseQuantity(q string) (float64, error) {
	p, err := resource.ParseQuantity(q)
	if err != nil {
		return 0, fmt.Errorf("parseQuantity: %q is not a Kubernetes quantity: %w", q, err)
	}
	return p.AsApproximateFloat64(), nil
}

// FormatQuantity is a number as a canonical quantity: a fraction in
// milli-units (0.1 → "100m"), a whole multiple of 1024 with a binary suffix
// (1073741824 → "1Gi", as upstream documents it), any other whole number in
// decimal form (2 → "2").
func FormatQuantity(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/1000 {
		return "", fmt.Errorf("formatQuantity: %v is not a quantity", f)
	}
	if f == math.Trunc(f) && f != 0 && math.Mod(f, 1024) == 0 {
		return resource.NewQuantity(int64(f), resource.BinarySI).String(), nil
	}
	return resource.NewMilliQuantity(int64(math.Round(f*1000)), resource.DecimalSI).String(), nil
}

func quantities(name, a, b string) (resource.Quantity, resource.Quantity, error) {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return qa, qa, fmt.Errorf("%s: %q is not a Kubernetes quantity: %w", name, a, err)
	}
	qb, err := resource.ParseQuantity(b)
	if err != nil {
		return qa, qb, fmt.Errorf("%s: %q is not a Kubernetes quantity: %w", name, b, err)
	}
	return qa, qb, nil
}

// SumQuantity is a + b in the first one's format ("1Gi" + "512Mi" →
// "1536Mi", "500m" + "500m" → "1").
func SumQuantity(a, b string) (string, error) {
	qa, qb, err := quantities("sumQuantity", a, b)
	if err != nil {
		return "", err
	}
	qa.Add(qb)
	return qa.String(), nil
}

// SubtractQuantity is a - b ("1Gi" - "512Mi" → "512Mi", "100m" - "200m" →
// "-100m").
func SubtractQuantity(a, b string) (string, error) {
	qa, qb, err := quantities("subtractQuantity", a, b)
	if err != nil {
		return "", err
	}
	qa.Sub(qb)
	return qa.String(), nil
}
