-- Each request with the next cookie of a file (one `Cookie` header value a line, given after `--`),
-- round the list: every session in turn, as many signed-in users would. Then the same JSON summary as
-- wrk-report.lua. Each of wrk's threads starts at its own place in the list.
local cookies = {}
local position = 1

local threads = 0
function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then cookies[#cookies + 1] = line end
  end
  local spacing = math.floor(#cookies / 16)
  position = ((offset or 0) * spacing) % #cookies + 1
end

function request()
  wrk.headers["cookie"] = cookies[position]
  position = position % #cookies + 1
  return wrk.format()
end

dofile(string.gsub(debug.getinfo(1, "S").source, "^@(.*)wrk%-rotate%.lua$", "%1wrk-report.lua"))
