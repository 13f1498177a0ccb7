-- wrk script for bench/run.py: POST the Telegram-like body of $BENCH_BODY_FILE, a new update each
-- request (update_id = a counter, so the redelivery memory never answers from memory), from one of
-- $BENCH_USERS senders (default 1000) in the same group, so routes are created and then reused.
-- BENCH_STATIC=1 sends the identical body every time (measures the redelivery-memory path).
-- Prints one machine-readable RESULT line at the end (latencies in microseconds).
local path = os.getenv("BENCH_BODY_FILE") or "body.json"
local f = assert(io.open(path, "rb"))
local body = f:read("*a"):gsub("%s+$", "")
f:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Telegram-Bot-Api-Secret-Token"] = os.getenv("BENCH_SECRET") or "bench-secret-token-invented"

local users = tonumber(os.getenv("BENCH_USERS") or "1000")
local head, tail = body:match('^(%{"update_id":)%d+(.*)$')
local uhead, utail = tail:match('^(.-"from":%{"id":)%d+(.*)$')
local counter = 0
local thread_id = 0
function setup(thread)
  thread_id = thread_id + 1
  -- a fresh id range per wrk invocation (BENCH_ID_BASE), so ids never repeat across runs
  thread:set("base", (tonumber(os.getenv("BENCH_ID_BASE") or "0")) + thread_id * 100000000)
end
if os.getenv("BENCH_STATIC") ~= "1" and head and uhead then
  request = function()
    counter = counter + 1
    local b = head .. (base + counter) .. uhead .. (5550000000 + counter % users) .. utail
    return wrk.format(nil, nil, nil, b)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_s=%.3f rps=%.1f mean_us=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_timeout=%d non2xx3xx=%d\n",
    summary.requests, secs, summary.requests / secs, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.timeout, e.status))
end
