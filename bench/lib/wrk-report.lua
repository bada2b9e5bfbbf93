-- wrk's summary as one JSON line on stdout, read by bench/lib/load.ts. Times are in microseconds.
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"durationUs":%d,"requests":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"meanUs":%.3f,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"bytes":%d}\n',
    summary.duration, summary.requests, errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, summary.bytes))
end
