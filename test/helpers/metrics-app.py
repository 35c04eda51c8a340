# An app serving Prometheus /metrics for --metrics-merge tests: POST /mode (ok, malformed, slow, large) changes the next answers; prints its port.
import http.server
import sys
import threading

APP_TEXT = """# HELP app_jobs_total Jobs done.
# TYPE app_jobs_total counter
app_jobs_total{queue="a"} 7
# HELP app_latency_seconds Job latency.
# TYPE app_latency_seconds histogram
app_latency_seconds_bucket{le="0.5"} 1
app_latency_seconds_bucket{le="+Inf"} 2
app_latency_seconds_sum 1.25
app_latency_seconds_count 2
# HELP process_cpu_user_seconds_total The app's own CPU time: the proxy has one of this name.
# TYPE process_cpu_user_seconds_total counter
process_cpu_user_seconds_total 99
"""
mode = "ok"
release = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        global mode
        mode = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        if mode == "slow":
            # Headers and a first line, then nothing until the test ends.
            self.send_response(200)
            self.send_header("content-type", "text/plain; version=0.0.4")
            self.send_header("content-length", str(len(APP_TEXT)))
            self.end_headers()
            self.wfile.write(APP_TEXT[:40].encode())
            self.wfile.flush()
            release.wait(30)
            return
        if mode == "malformed":
            body = b"<html><body>Not metrics</body></html>\n"
        elif mode == "large":
            body = b"# TYPE app_big gauge\n" + b"".join(b'app_big{i="%d",pad="%s"} 1\n' % (i, b"x" * 80) for i in range(95000))
        else:
            body = APP_TEXT.encode()
        self.send_response(200)
        self.send_header("content-type", "text/plain; version=0.0.4")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
sys.exit(0)
