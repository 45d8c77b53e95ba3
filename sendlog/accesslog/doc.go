// Package accesslog reads web-server access logs as timed calls, so a
// server's own log can be checked against the rate limits and in-flight cap
// its clients promised to keep.
//
// The default nginx and Apache formats stamp each request to the second,
// which cannot prove a per-second rule, so the parser wants the standard
// combined format with two more fields at the end.
//
// nginx, with the request's end ($msec, seconds with millisecond
// resolution, written when the response is finished) and its duration
// ($request_time, seconds with millisecond resolution):
//
//	log_format timed '$remote_addr - $remote_user [$time_local] '
//	                 '"$request" $status $body_bytes_sent '
//	                 '"$http_referer" "$http_user_agent" $msec $request_time';
//	access_log /var/log/nginx/access.log timed;
//
// The call then ran over [$msec − $request_time, $msec).
//
// Apache httpd, with the time the request was received (%{msec}t,
// milliseconds since the epoch) and the time taken to serve it (%D,
// microseconds):
//
//	LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %{msec}t %D" timed
//	CustomLog logs/access_log timed
//
// The call then ran over [%{msec}t, %{msec}t + %D).
//
// Times are read as exact integer nanoseconds, never through float64, so two
// requests exactly one window apart stay exactly one window apart. Parsing a
// line does not allocate: an Entry's Method and Path point into the line.
package accesslog
