-- W1 reference: the scalar loop of w1.wg in Lua 5.4, written as plainly as the
-- wengert source (math.sin looked up each time, no local caching tricks).
local function w1(n)
  local x = 0.5
  for i = 0, n - 1 do x = math.sin(x) * 0.9 + 0.1 end
  return x
end

local n = tonumber(arg[1] or "10000000")
print(string.format("%.17g", w1(n)))
