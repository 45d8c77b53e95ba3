// Package rlheader reads the rate-limit headers providers answer with:
// the IETF RateLimit and RateLimit-Policy fields, X-RateLimit-*,
// Retry-After, OpenAI's x-ratelimit-*-requests and -tokens with
// retry-after-ms, and Anthropic's anthropic-ratelimit-* family. infer
// learns a contract from them; serve logs the ones it sends under the same
// names and columns.
package rlheader
