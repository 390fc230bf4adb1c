-- wrk script of the read-plan benchmark (tests/bench/api_read_plan_load.sh).
-- API_MODE = series (Zipf keys from API_KEYS, 30 New York days) | archive (the archive's own
-- /get of the same keys' total records) | year | alltime | breakdown (bench|long: 12 months,
-- 61 months, 30 days) | serieslong (/series of bench|long, its 5 years by day in New York
-- time: the longest total record) | archivelong (the archive's /get of that record) | nginx;
-- API_REF = unit_reference_ts.
local mode = os.getenv("API_MODE") or "series"
local ref = os.getenv("API_REF")
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local pick = dofile(here .. "wrk_keys.lua").load(os.getenv("API_KEYS"))

request = function()
  if mode == "series" then
    return wrk.format("GET", "/series?ns=bench&key=" .. pick() ..
      "&unit=day&units=30&timezone=America%2FNew_York&unit_reference_ts=" .. ref)
  elseif mode == "archive" then
    return wrk.format("GET", "/get?key=bench%7C" .. pick())
  elseif mode == "year" then
    return wrk.format("GET", "/breakdown?ns=bench&key=long&sub=c&unit=month&units=12&limit=10&unit_reference_ts=" .. ref)
  elseif mode == "alltime" then
    return wrk.format("GET", "/breakdown?ns=bench&key=long&sub=c&unit=month&units=61&limit=10&unit_reference_ts=" .. ref)
  elseif mode == "serieslong" then
    return wrk.format("GET", "/series?ns=bench&key=long&unit=day&units=1826&timezone=America%2FNew_York&unit_reference_ts=" .. ref)
  elseif mode == "archivelong" then
    return wrk.format("GET", "/get?key=bench%7Clong")
  elseif mode == "breakdown" then
    return wrk.format("GET", "/breakdown?ns=bench&key=long&sub=c&unit=day&units=30&limit=10&unit_reference_ts=" .. ref)
  end
  return wrk.format("GET", "/")
end
