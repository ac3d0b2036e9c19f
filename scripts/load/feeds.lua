-- wrk script: GET feed pages with pre-signed FeedAccess headers, one "<path>\t<header>" per line,
-- as written by `herald-dev bench feeds --write-headers FILE`.
--   wrk -t1 -c16 -d10s --latency -s scripts/load/feeds.lua http://127.0.0.1:8080 -- feeds.txt
local requests = {}
local index = 0

function init(args)
  for line in io.lines(args[1] or "feeds.txt") do
    local path, header = line:match("^([^\t]+)\t(.+)$")
    if path then requests[#requests + 1] = { path = path, header = header } end
  end
end

function request()
  index = index % #requests + 1
  local item = requests[index]
  return wrk.format("GET", item.path, { ["Authorization"] = item.header })
end
