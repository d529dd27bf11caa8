package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	engineconversion "github.com/orkspace/orkestra-cel/engine/conversion"
)

// tlsClients is how many clients send reviews at once: the API server
// converts the objects of several requests in parallel.
const tlsClients = 4

// BenchmarkConvertTLS is /convert end to end as the API server meets it:
// the whole Server over HTTPS on a local port, tlsClients keep-alive clients
// each posting ConversionReviews of n Websites v1alpha1 → v1, side by side
// with the identity converter (apiVersion only) on the same server code.
// It reports reviews/s and cpu-ns/op, the process's CPU time per review
// (server and clients; steadier than wall-clock time on a busy machine), and
// for cel x-identity: its throughput over the identity converter's, by CPU
// time (1 is as fast).
//
//	go test -run '^$' -bench ConvertTLS ./webhook/
func BenchmarkConvertTLS(b *testing.B) {
	celPlan := compilePlan(b, websiteKatalog)
	converters := []struct {
		name string
		conv Converter
	}{
		{"identity", identityConverter{}},
		{"cel", engineconversion.New(celPlan, engineconversion.Options{})},
	}
	for _, n := range []int{100} {
		body := benchReview(b, n)
		cpuPerOp := map[string]float64{}
		for _, c := range converters {
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				ts := startServer(b, func(s *Server) { s.Plan, s.Converter = celPlan, c.conv })
				client := &http.Client{Transport: &http.Transport{
					TLSClientConfig:     ts.client.Transport.(*http.Transport).TLSClientConfig,
					MaxIdleConnsPerHost: tlsClients,
					ForceAttemptHTTP2:   true,
				}}
				defer client.CloseIdleConnections()
				post := func() error {
					resp, err := client.Post(ts.convert, "application/json", bytes.NewReader(body))
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					if _, err := io.Copy(io.Discard, resp.Body); err != nil {
						return err
					}
					if resp.StatusCode != http.StatusOK {
						return fmt.Errorf("HTTP %d", resp.StatusCode)
					}
					return nil
				}
				if err := post(); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(body)))
				b.SetParallelism(max(1, tlsClients/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				cpu := processCPU()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := post(); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reviews/s")
				if cpu > 0 {
					perOp := float64(processCPU()-cpu) / float64(b.N)
					cpuPerOp[c.name] = perOp
					b.ReportMetric(perOp, "cpu-ns/op")
					if id := cpuPerOp["identity"]; c.name != "identity" && id > 0 {
						b.ReportMetric(id/perOp, "x-identity")
					}
				}
			})
		}
	}
}
