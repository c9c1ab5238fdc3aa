-- wrk: `ended` under load, over pre-created sessions s0…s{N-1} (SESSIONS, default 10000).
--
-- MODE=mix (default), the gesture mix: whole gestures, one phase per sweep over the sessions:
-- `began` to every session in turn, then `changed` to every session, then `ended` (with its snap
-- and animation) to every session, and again. A third of the requests are `ended`. Each request
-- is valid: between two phases of one session there are SESSIONS - 1 other requests, far more
-- than the requests in flight (one per connection), and `began` may grab an animating card.
-- The mix's releases never dismiss the card (drags of -200 to +99.5 pt from where it was
-- grabbed, at most 800 pt/s: short of the facebook preset's hidden rules, S - 70 and 1500 pt/s),
-- so the next `began` finds it shown however fast the run goes. (With drags to +199.5, a run
-- slower than ≈ 40,000 requests/s let a dismissal's 0.25 s end before the session's next `began`,
-- which sheetd rightly refused with 409: 1 % of the requests in two rounds of a slow run.)
-- Create the sessions resting (PUT), nothing else.
--
-- MODE=ended, pure `ended`: one `ended` (translation and velocity: the release and its snap) per
-- session, s0, s1, … in turn. Create every session dragging first (PUT, then `began`), and more
-- of them than the run will send: past SESSIONS the ids wrap and sheetd answers 409 (counted by
-- wrk as non-2xx).
local sessions = tonumber(os.getenv("SESSIONS") or "10000")
local mode = os.getenv("MODE") or "mix"
assert(mode == "mix" or mode == "ended", "MODE must be mix or ended")
local counter = -1
-- wrk 4.1 calls request() once more in thread 0 before the run, to check the script, and drops
-- the request. So the first call answers without taking a turn: in mix, the `began` of s0 (sent
-- or not, it is valid, as the next one is); in ended, a GET of s0 (so s0's one `ended` is kept).
local checked = false
local velocities = { -800, -300, 0, 300, 800 }
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local function ended(n, span)
    local t = (n % span) - 200
    local v = velocities[(n % #velocities) + 1]
    return '{"phase":"ended","translation":' .. t .. '.5,"velocity":' .. v .. '}'
end

request = function()
    if not checked then
        checked = true
        if mode == "ended" then return wrk.format("GET", "/sessions/s0", {}, nil) end
        return wrk.format(nil, "/sessions/s0/pan", nil, '{"phase":"began"}')
    end
    counter = counter + 1
    local id = counter % sessions
    local body
    if mode == "ended" then
        body = ended(counter, 400)
    else
        local sweep = math.floor(counter / sessions) % 3
        if sweep == 0 then
            body = '{"phase":"began"}'
        elseif sweep == 1 then
            body = '{"phase":"changed","translation":' .. ((counter % 400) - 200) .. '.5,"velocity":-800}'
        else
            body = ended(counter, 300)
        end
    end
    return wrk.format(nil, "/sessions/s" .. id .. "/pan", nil, body)
end
