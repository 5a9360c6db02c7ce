-- wrk script of the server benchmark: POSTs the lines of the file given after
-- `--` (one JSON body each), in turn, as application/json.
local requests = {}
local next_index = 0

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then
      requests[#requests + 1] = wrk.format("POST", nil, {["Content-Type"] = "application/json"}, line)
    end
  end
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end
