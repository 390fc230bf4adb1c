-- The keys of a wrk script (tests/bench/*_wrk.lua), loaded in one place: a file of keys,
-- one a line, read once per wrk thread, and a random pick among them (seeded by the time
-- and the key count, so two runs ask different sequences).
--
--   local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"  -- this script's directory
--   local pick = dofile(here .. "wrk_keys.lua").load(os.getenv("API_KEYS"))
--   ... pick() ...                                   -- a random key of the file
local M = {}

function M.load(path)
  assert(path, "the file of keys is not set (see the script's header)")
  local keys = {}
  for line in io.lines(path) do
    keys[#keys + 1] = line
  end
  local n = #keys
  assert(n > 0, "no keys in " .. path)
  math.randomseed(os.time() + n)
  return function()
    return keys[math.random(n)]
  end
end

return M
