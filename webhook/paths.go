package webhook

// ConvertPath is the path the API server posts ConversionReviews to: the
// server mounts its handler there, and every CRD conversion stanza Orkestra
// writes (manifests, dev, conformance) points at it.
const ConvertPath = "/convert"
