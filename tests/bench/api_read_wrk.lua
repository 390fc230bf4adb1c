-- wrk script for the clickatron-api read-path benchmark (tests/bench/api_read_load.sh).
-- API_MODE = series | breakdown | archive (the archive's own /get of a series total record,
-- the backend call every /series makes); API_KEYS = a file of keys, one a line;
-- API_REF = unit_reference_ts. Each request picks a key at random.
local mode = os.getenv("API_MODE") or "series"
local ref = os.getenv("API_REF")
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local pick = dofile(here .. "wrk_keys.lua").load(os.getenv("API_KEYS"))

request = function()
  local key = pick()
  if mode == "series" then
    return wrk.format("GET", "/series?ns=bench&key=" .. key ..
      "&unit=day&units=30&timezone=America%2FNew_York&unit_reference_ts=" .. ref)
  elseif mode == "breakdown" then
    return wrk.format("GET", "/breakdown?ns=bench&key=" .. key ..
      "&sub=c&unit=day&units=30&limit=10&unit_reference_ts=" .. ref)
  elseif mode == "archive" then
    return wrk.format("GET", "/get?key=bench%7C" .. key)
  end
  return wrk.format("GET", "/")
end
