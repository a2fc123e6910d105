-- lua_mix.lua - a mixed Lua workload for whole-program recordings (issue 29): recursion,
-- string.format, table.sort with a Lua comparator, gmatch, gsub, metatables. Run by
-- scripts/pressure-trial.sh with a Lua built with -finstrument-functions (docs/BENCHMARKS.md).
-- usage: lua lua_mix.lua [ROUNDS]
local N = tonumber(arg and arg[1]) or 1
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local acc = 0
for round = 1, N do
  acc = acc + fib(22)
  local t = {}
  for i = 1, 20000 do t[i] = string.format("k%05d:%d", (i * 7919) % 20000, i) end
  table.sort(t, function(a, b) return a > b end)
  local s = table.concat(t, ",", 1, 2000)
  local n = 0
  for w in s:gmatch("k(%d+)") do n = n + tonumber(w) end
  acc = acc + n
  local m = {}
  for i = 1, 20000 do m["x" .. (i % 997)] = (m["x" .. (i % 997)] or 0) + i end
  for k, v in pairs(m) do acc = acc + #k + v % 3 end
  local q = {}
  for i = 1, 5000 do q[#q + 1] = setmetatable({v = i}, {__index = function(_, k) return k end}) end
  for i = 1, 5000 do acc = acc + #q[i].foo end
  acc = acc + #(s:gsub("%d", "x"))
end
print(acc)
