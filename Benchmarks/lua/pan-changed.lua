-- wrk: `pan changed` events round-robin over pre-created sessions s0…s{N-1} (each dragging).
-- The session count comes from the environment (SESSIONS, default 10000).
local sessions = tonumber(os.getenv("SESSIONS") or "10000")
local counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
    counter = counter + 1
    local id = counter % sessions
    local t = (counter % 400) - 200
    return wrk.format(nil, "/sessions/s" .. id .. "/pan",
        nil, '{"phase":"changed","translation":' .. t .. '.5,"velocity":-800}')
end
