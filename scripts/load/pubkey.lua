-- wrk script: GET /v1/users/{wallet}/pubkey for wallets listed one per line in a file.
--   wrk -t1 -c64 -d10s --latency -s scripts/load/pubkey.lua http://127.0.0.1:8080 -- wallets.txt
local wallets = {}
local index = 0

function init(args)
  for line in io.lines(args[1] or "wallets.txt") do
    if #line > 0 then wallets[#wallets + 1] = line end
  end
end

function request()
  index = index % #wallets + 1
  return wrk.format("GET", "/v1/users/" .. wallets[index] .. "/pubkey")
end
