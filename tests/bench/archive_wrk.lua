-- wrk script for the clickatron-archive benchmark (tests/bench/archive_load.sh).
-- ARCHIVE_MODE = get | miss | mget | fwmatch; ARCHIVE_KEYS = a file of percent-encoded keys
-- (for fwmatch: prefixes), one a line. Each request picks keys at random from the file.
local mode = os.getenv("ARCHIVE_MODE") or "get"
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local pick = dofile(here .. "wrk_keys.lua").load(os.getenv("ARCHIVE_KEYS"))

request = function()
  if mode == "get" then
    return wrk.format("GET", "/get?key=" .. pick())
  elseif mode == "miss" then
    -- '~' follows every byte of the generated keys: an absent key next to a real one
    return wrk.format("GET", "/get?key=" .. pick() .. "~")
  elseif mode == "mget" then
    local parts = {}
    for i = 1, 10 do
      parts[i] = "key=" .. pick()
    end
    return wrk.format("GET", "/mget?" .. table.concat(parts, "&"))
  else
    return wrk.format("GET", "/fwmatch?key=" .. pick())
  end
end
