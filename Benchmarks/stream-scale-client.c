// Load client for Benchmarks/stream-scale: N realtime SSE frame streams against one sheetd, an idle
// phase and a busy phase, with frame lateness measured against each frame's due time.
//
// One thread, epoll, non-blocking sockets. N stream connections (GET /sessions/s{i}/frames, HTTP/1.1
// chunked, SSE parsed incrementally) and a few keep-alive control connections (PUT the sessions,
// GET snapshots for the clock offset, POST /show to start animations). Client times are
// CLOCK_MONOTONIC seconds.
//
// Lateness of frame k of animation A = client receive time - (start_A + t_k), where start_A is the
// animation's `startTime` on the server clock (from the POST /show response) mapped to the client
// clock by offset = client - server, estimated from snapshot `time` fields at a quiet moment (the
// GET with the shortest round trip; its half round trip is the offset's uncertainty).
//
// Busy phase: each session is re-triggered (show to the other detent) as soon as its stream
// reports `settled`, so every stream has an animation in flight except for one POST round trip.
//
// Usage: stream-scale-client --port P --pid SHEETD_PID [--streams N] [--fps F] [--seconds S]
//        [--warmup W] [--controls C] [--preset fluid|facebook]
// Prints a summary, per-second lines, and markdown rows starting with "| " for docs/PERFORMANCE.md.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// ---------------------------------------------------------------- configuration and helpers

static int g_port = 0, g_pid = 0, g_n = 1000, g_fps = 60, g_ctrl_n = 0;
static double g_seconds = 10, g_warmup = 1;
static const char *g_preset = "fluid";
static const char *g_det_a = "full", *g_det_b = "tip", *g_init = "half";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double cpu_self_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stream-scale-client: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

// utime+stime of a process in seconds (/proc/PID/stat fields 14 and 15), -1 if unreadable.
static double proc_cpu_s(int pid) {
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    p += 2;  // at field 3 (state)
    unsigned long long ut = 0, st = 0;
    int field = 3;
    for (char *tok = strtok(p, " "); tok; tok = strtok(NULL, " "), field++) {
        if (field == 14) ut = strtoull(tok, NULL, 10);
        if (field == 15) { st = strtoull(tok, NULL, 10); break; }
    }
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
// VmRSS of a process in MB (pid 0: this process).
static double proc_rss_mb(int pid) {
    char path[64], line[256];
    if (pid) snprintf(path, sizeof path, "/proc/%d/status", pid);
    else snprintf(path, sizeof path, "/proc/self/status");
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    double mb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) { mb = strtod(line + 6, NULL) / 1024.0; break; }
    fclose(f);
    return mb;
}

// Machine-wide CPU seconds busy and total (all cores) from /proc/stat.
static void machine_cpu(double *busy, double *total) {
    unsigned long long v[10] = {0};
    FILE *f = fopen("/proc/stat", "r");
    *busy = *total = 0;
    if (!f) return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        double tot = 0;
        for (int i = 0; i < 8; i++) tot += v[i];
        *total = tot / sysconf(_SC_CLK_TCK);
        *busy = (tot - v[3] - v[4]) / sysconf(_SC_CLK_TCK);
    }
    fclose(f);
}

// Per-thread CPU of a process: name and utime+stime ticks of each task.
#define MAX_TASKS 64
typedef struct {
    int n;
    int tid[MAX_TASKS];
    char name[MAX_TASKS][20];
    unsigned long long ticks[MAX_TASKS];
} tasks_t;
static void read_tasks(int pid, tasks_t *ts) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    ts->n = 0;
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && ts->n < MAX_TASKS) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/stat", pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *o = strchr(buf, '('), *c = strrchr(buf, ')');
        if (!o || !c) continue;
        int k = ts->n++;
        ts->tid[k] = atoi(e->d_name);
        snprintf(ts->name[k], sizeof ts->name[k], "%.*s", (int)(c - o - 1), o + 1);
        unsigned long long ut = 0, st = 0;
        int field = 3;
        for (char *tok = strtok(c + 2, " "); tok; tok = strtok(NULL, " "), field++) {
            if (field == 14) ut = strtoull(tok, NULL, 10);
            if (field == 15) { st = strtoull(tok, NULL, 10); break; }
        }
        ts->ticks[k] = ut + st;
    }
    closedir(d);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}
static float pct(float *v, size_t n, double p) {  // v sorted
    if (!n) return NAN;
    size_t i = (size_t)ceil(p * n) - 1;
    if (i >= n) i = n - 1;
    return v[i];
}

// ---------------------------------------------------------------- connections

enum { K_STREAM, K_CTRL };
enum { H_HDR, B_SIZE, B_EXT, B_DATA, B_DCR, B_DLF, B_TRAILER, B_LEN, B_DONE };
enum { J_NONE, J_PUT, J_GET, J_POST };

typedef struct {
    int fd, kind, idx;
    int connecting;  // waiting for the connect to finish
    int open;        // stream: got 200 headers
    char wbuf[384];
    int wlen, woff;
    // HTTP response parser
    int st, status, chunked, close_after, trailer_len;
    long clen, rem, size;
    char hdr[2048];
    int hlen;
    // stream: SSE line and event; ctrl: response body
    char line[2048];
    int llen;
    char ev[24];
    char data[2048];
    int dlen;
    // ctrl job
    int job, job_sess;
    double job_sent;
} conn_t;

typedef struct {
    long anchor_id[2];  // two most recent animations with a known start (client clock)
    double anchor_start[2];
    int anchor_next;
    long last_anim;
    int last_index;
    int inflight, queued, toggle;
    double last_resp;
    // frames that arrived before their POST /show response (start not known yet)
    int npend;
    struct { long anim; double t, recv, arr; } pend[48];
} sess_t;

static int ep;
static conn_t *streams, *ctrls;
static sess_t *sess;
static struct sockaddr_in g_addr;

// ---------------------------------------------------------------- measurement state

enum { P_CREATE, P_OPEN, P_OFFSET1, P_IDLE, P_WARM, P_WINDOW, P_DRAIN, P_OFFSET2, P_DONE };
static int phase = P_CREATE;
static double w0 = 1e300, w1 = 1e300;  // the measurement window (client clock)
static int triggering = 0;

static double offset = 0, offset_hi = 1e300, offset_lo = -1e300, best_rtt = 1e300;
static double offset1 = NAN, offset1_rtt = NAN;
static int offset_samples = 0;
#define OFFSET_SAMPLES 30

static int created = 0, next_create = 0, streams_started = 0, streams_open = 0;
static int *ready;  // ring of sessions waiting for a POST /show
static int rq_head = 0, rq_len = 0;

static float *lat, *lat_srv, *lat_cli;
static double g_arrival = 0;    // kernel receive time of the current read, client clock (0: unknown)
static double rt_minus_mono = 0;  // CLOCK_REALTIME - CLOCK_MONOTONIC
static size_t lat_n = 0, lat_cap = 0;
static float *rtt;
static size_t rtt_n = 0, rtt_cap = 0;
static long frames_total = 0, frames_window = 0, frames_unanchored = 0, frames_skipped = 0,
            frames_start_missed = 0, frames_due_window = 0, settled_n = 0, interrupted_n = 0,
            closed_n = 0, keepalives = 0, posts = 0, posts_noanim = 0, post_errors = 0,
            start_before_send = 0, watchdog = 0, stream_ends = 0, ctrl_reconnects = 0,
            idle_events = 0, pend_overflow = 0;
static double post_start_delay_max = 0, busy_time = 0;

#define MAX_SECS 3600
static long sec_frames[MAX_SECS];
static double sec_lat_sum[MAX_SECS], sec_lat_max[MAX_SECS];
static long sec_lat_n[MAX_SECS];
static double sec_cpu[MAX_SECS + 1];
static double sec_batch_max[MAX_SECS];  // longest time the client spent on one epoll batch
static long sec_backlog[MAX_SECS];      // bytes waiting in the client's stream sockets at each tick
static tasks_t tasks0, tasks1;
static double mach_busy0, mach_total0, mach_busy1, mach_total1;
static int sec_cpu_n = 0;

// ---------------------------------------------------------------- sockets

static void ep_mod(conn_t *c, uint32_t events, int op) {
    struct epoll_event e = {.events = events, .data.ptr = c};
    if (epoll_ctl(ep, op, c->fd, &e) < 0) die("epoll_ctl: %s", strerror(errno));
}

static void reset_parser(conn_t *c) {
    c->st = H_HDR;
    c->hlen = 0;
    c->status = 0;
    c->chunked = 0;
    c->close_after = 0;
    c->clen = -1;
    c->llen = 0;
    c->dlen = 0;
    c->ev[0] = 0;
}

static void conn_open(conn_t *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) die("socket: %s (raise ulimit -n)", strerror(errno));
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (c->kind == K_STREAM) setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    reset_parser(c);
    c->wlen = c->woff = 0;
    c->open = 0;
    int r = connect(c->fd, (struct sockaddr *)&g_addr, sizeof g_addr);
    if (r < 0 && errno != EINPROGRESS) die("connect: %s", strerror(errno));
    c->connecting = 1;
    ep_mod(c, EPOLLOUT, EPOLL_CTL_ADD);
}

static void conn_close(conn_t *c) {
    if (c->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
}

// Writes what is pending; returns 0 when all is written.
static int flush_w(conn_t *c) {
    while (c->woff < c->wlen) {
        ssize_t w = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN) return 1;
            return -1;
        }
        c->woff += (int)w;
    }
    return 0;
}

static void queue_write(conn_t *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    c->wlen = vsnprintf(c->wbuf, sizeof c->wbuf, fmt, ap);
    va_end(ap);
    c->woff = 0;
    if (c->connecting) return;  // sent when the connect completes
    int r = flush_w(c);
    if (r > 0) ep_mod(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
    if (r < 0) die("send on %s %d: %s", c->kind == K_CTRL ? "control" : "stream", c->idx, strerror(errno));
}

// ---------------------------------------------------------------- control jobs

static void rq_push(int i) {
    if (sess[i].queued || sess[i].inflight) return;
    sess[i].queued = 1;
    ready[(rq_head + rq_len) % g_n] = i;
    rq_len++;
}
static int rq_pop(void) {
    int i = ready[rq_head];
    rq_head = (rq_head + 1) % g_n;
    rq_len--;
    sess[i].queued = 0;
    return i;
}

static void ctrl_start(conn_t *c, int job, int s) {
    c->job = job;
    c->job_sess = s;
    c->job_sent = now_s();
    if (job == J_PUT) {
        char body[96];
        int bl = snprintf(body, sizeof body, "{\"preset\":\"%s\",\"initialDetent\":\"%s\"}", g_preset, g_init);
        queue_write(c,
                    "PUT /sessions/s%d HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Content-Length: %d\r\n\r\n%s",
                    s, bl, body);
    } else if (job == J_GET) {
        queue_write(c, "GET /sessions/s%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", s);
    } else {
        sess_t *ss = &sess[s];
        const char *d = ss->toggle ? g_det_b : g_det_a;
        ss->toggle ^= 1;
        ss->inflight = 1;
        char body[64];
        int bl = snprintf(body, sizeof body, "{\"detent\":\"%s\"}", d);
        queue_write(c,
                    "POST /sessions/s%d/show HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Content-Length: %d\r\n\r\n%s",
                    s, bl, body);
        posts++;
    }
}

// Gives idle control connections work for the current phase.
static void pump(void) {
    for (int k = 0; k < g_ctrl_n; k++) {
        conn_t *c = &ctrls[k];
        if (c->fd < 0 || c->job != J_NONE) continue;
        if (phase == P_CREATE) {
            if (next_create >= g_n) return;
            ctrl_start(c, J_PUT, next_create++);
        } else if (phase == P_OFFSET1 || phase == P_OFFSET2) {
            if (k == 0 && offset_samples < OFFSET_SAMPLES) ctrl_start(c, J_GET, 0);
            return;
        } else if (triggering) {
            if (!rq_len) return;
            ctrl_start(c, J_POST, rq_pop());
        } else {
            return;
        }
    }
}

static double json_num(const char *body, const char *key, int *ok) {
    const char *p = strstr(body, key);
    if (!p) { *ok = 0; return 0; }
    *ok = 1;
    return strtod(p + strlen(key), NULL);
}

// recv: when the client read it; arr: when the kernel received the last packet of that read
// (SO_TIMESTAMPNS), so arr - due is the server's part and recv - arr the client's.
static void record_frame_lateness(double recv, double due, double arr) {
    if (recv < w0 || recv >= w1) return;
    double l = (recv - due) * 1000.0;
    if (lat_n < lat_cap) {
        lat_srv[lat_n] = arr > 0 ? (float)((arr - due) * 1000.0) : NAN;
        lat_cli[lat_n] = arr > 0 ? (float)((recv - arr) * 1000.0) : NAN;
        lat[lat_n++] = (float)l;
    }
    int sec = (int)(recv - w0);
    if (sec >= 0 && sec < MAX_SECS) {
        sec_lat_sum[sec] += l;
        sec_lat_n[sec]++;
        if (l > sec_lat_max[sec]) sec_lat_max[sec] = l;
    }
}

static void ctrl_done(conn_t *c) {
    double t = now_s();
    c->line[c->llen < (int)sizeof c->line ? c->llen : (int)sizeof c->line - 1] = 0;
    const char *body = c->line;
    int job = c->job, s = c->job_sess;
    c->job = J_NONE;
    if (job == J_PUT) {
        if (c->status / 100 != 2) die("PUT /sessions/s%d answered %d: %s", s, c->status, body);
        created++;
    } else if (job == J_GET) {
        int ok;
        double st = json_num(body, "\"time\":", &ok);
        if (c->status != 200 || !ok) die("GET /sessions/s%d answered %d: %s", s, c->status, body);
        double hi = t - st, lo = c->job_sent - st;
        if (hi < offset_hi) offset_hi = hi;
        if (lo > offset_lo) offset_lo = lo;
        if (t - c->job_sent < best_rtt) best_rtt = t - c->job_sent;
        offset = (offset_hi + offset_lo) / 2;
        offset_samples++;
    } else if (job == J_POST) {
        sess_t *ss = &sess[s];
        ss->inflight = 0;
        ss->last_resp = t;
        if (rtt_n < rtt_cap) rtt[rtt_n++] = (float)((t - c->job_sent) * 1000);
        if (c->status != 200) {
            post_errors++;
            if (post_errors < 5) fprintf(stderr, "POST show s%d answered %d: %.200s\n", s, c->status, body);
            if (triggering) rq_push(s);
            return;
        }
        const char *a = strstr(body, "\"animation\":{");
        if (!a) {  // show to where it already is: try the other detent
            posts_noanim++;
            if (triggering) rq_push(s);
            return;
        }
        int ok1, ok2, ok3;
        long id = (long)json_num(a, "\"id\":", &ok1);
        double start = json_num(a, "\"startTime\":", &ok2) + offset;
        double dur = json_num(a, "\"duration\":", &ok3);
        if (!ok1 || !ok2 || !ok3) die("unexpected show response: %s", body);
        if (start < c->job_sent - 50e-6) start_before_send++;  // offset error beyond 50 us
        if (start - c->job_sent > post_start_delay_max) post_start_delay_max = start - c->job_sent;
        ss->anchor_id[ss->anchor_next] = id;
        ss->anchor_start[ss->anchor_next] = start;
        ss->anchor_next ^= 1;
        // Time animating inside the window, and frames due inside it if streamed in full.
        double ov = fmin(start + dur, w1) - fmax(start, w0);
        if (ov > 0) busy_time += ov;
        long n = (long)ceil(dur * g_fps - 1e-9);
        if (n < 1) n = 1;
        for (long k = 0; k <= n; k++) {
            double due = start + fmin((double)k / g_fps, dur);
            if (due >= w0 && due < w1) frames_due_window++;
        }
        // Frames that came before this response.
        int keep = 0;
        for (int i = 0; i < ss->npend; i++) {
            if (ss->pend[i].anim == id) record_frame_lateness(ss->pend[i].recv, start + ss->pend[i].t, ss->pend[i].arr);
            else ss->pend[keep++] = ss->pend[i];
        }
        ss->npend = keep;
    }
}

// ---------------------------------------------------------------- SSE

static void on_frame(sess_t *ss, const char *data, double recv) {
    const char *p = strstr(data, "\"animation\":");
    const char *q = p ? strstr(p, "\"index\":") : NULL;
    const char *r = q ? strstr(q, "\"t\":") : NULL;
    if (!r) die("unexpected frame: %s", data);
    long anim = strtol(p + 12, NULL, 10);
    int index = (int)strtol(q + 8, NULL, 10);
    double t = strtod(r + 4, NULL);
    frames_total++;
    if (recv >= w0 && recv < w1) {
        frames_window++;
        int sec = (int)(recv - w0);
        if (sec < MAX_SECS) sec_frames[sec]++;
    }
    if (anim == ss->last_anim) {
        if (index > ss->last_index + 1) frames_skipped += index - ss->last_index - 1;
    } else if (index > 0) {
        frames_start_missed += index;
    }
    ss->last_anim = anim;
    ss->last_index = index;
    for (int k = 0; k < 2; k++)
        if (ss->anchor_id[k] == anim) { record_frame_lateness(recv, ss->anchor_start[k] + t, g_arrival); return; }
    if (ss->npend < (int)(sizeof ss->pend / sizeof ss->pend[0])) {
        ss->pend[ss->npend].anim = anim;
        ss->pend[ss->npend].t = t;
        ss->pend[ss->npend].recv = recv;
        ss->pend[ss->npend].arr = g_arrival;
        ss->npend++;
    } else {
        pend_overflow++;
    }
}

static void sse_dispatch(conn_t *c, double recv) {
    sess_t *ss = &sess[c->idx];
    c->data[c->dlen] = 0;
    if (phase == P_IDLE) idle_events++;
    if (!strcmp(c->ev, "frame")) {
        on_frame(ss, c->data, recv);
    } else if (!strcmp(c->ev, "settled")) {
        settled_n++;
        if (triggering) rq_push(c->idx);
    } else if (!strcmp(c->ev, "interrupted")) {
        interrupted_n++;
    } else if (!strcmp(c->ev, "closed")) {
        closed_n++;
    }
    c->ev[0] = 0;
    c->dlen = 0;
}

static void sse_line(conn_t *c, double recv) {
    char *l = c->line;
    int n = c->llen;
    if (n && l[n - 1] == '\r') n--;
    l[n] = 0;
    if (n == 0) {
        if (c->ev[0] || c->dlen) sse_dispatch(c, recv);
    } else if (l[0] == ':') {
        keepalives++;
        if (phase == P_IDLE) idle_events++;
    } else if (!strncmp(l, "event:", 6)) {
        const char *v = l + 6 + (l[6] == ' ');
        snprintf(c->ev, sizeof c->ev, "%s", v);
    } else if (!strncmp(l, "data:", 5)) {
        const char *v = l + 5 + (l[5] == ' ');
        int vl = (int)strlen(v);
        if (c->dlen && c->dlen < (int)sizeof c->data - 1) c->data[c->dlen++] = '\n';
        if (vl > (int)sizeof c->data - 1 - c->dlen) vl = (int)sizeof c->data - 1 - c->dlen;
        memcpy(c->data + c->dlen, v, vl);
        c->dlen += vl;
    }  // id:, retry: ignored
    c->llen = 0;
}

// Body bytes of a response.
static void body_bytes(conn_t *c, const char *p, long n, double recv) {
    if (c->kind == K_CTRL) {
        long room = (long)sizeof c->line - 1 - c->llen;
        if (n > room) n = room;
        memcpy(c->line + c->llen, p, n);
        c->llen += (int)n;
        return;
    }
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        long take = nl ? nl - p : n;
        long room = (long)sizeof c->line - 1 - c->llen;
        memcpy(c->line + c->llen, p, take < room ? take : room);
        c->llen += (int)(take < room ? take : room);
        if (!nl) return;
        sse_line(c, recv);
        p = nl + 1;
        n -= take + 1;
    }
}

static void response_done(conn_t *c) {
    if (c->kind == K_CTRL) {
        int close_after = c->close_after;
        ctrl_done(c);
        reset_parser(c);
        if (close_after) {  // reconnect (idle control connections time out after 30 s)
            conn_close(c);
            ctrl_reconnects++;
            conn_open(c);
        }
    } else {
        stream_ends++;
        if (c->open) streams_open--;
        conn_close(c);
    }
}

static void parse_headers(conn_t *c) {
    c->hdr[c->hlen] = 0;
    if (sscanf(c->hdr, "HTTP/1.%*d %d", &c->status) != 1) die("bad status line: %.80s", c->hdr);
    for (char *l = strstr(c->hdr, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        char *h = l + 2;
        if (!strncasecmp(h, "content-length:", 15)) c->clen = strtol(h + 15, NULL, 10);
        else if (!strncasecmp(h, "transfer-encoding:", 18) && strcasestr(h, "chunked")) c->chunked = 1;
        else if (!strncasecmp(h, "connection:", 11) && strcasestr(h, "close")) c->close_after = 1;
    }
    if (c->kind == K_STREAM) {
        if (c->status != 200) die("GET frames s%d answered %d", c->idx, c->status);
        c->open = 1;
        streams_open++;
    }
}

// Feeds bytes read from a connection through the HTTP parser.
static void feed(conn_t *c, const char *p, long n, double recv) {
    while (n > 0 && c->fd >= 0) {
        switch (c->st) {
        case H_HDR: {
            // Headers end at CRLFCRLF: accumulate until then.
            long take = 0;
            int end = 0;
            while (take < n) {
                if (c->hlen >= (int)sizeof c->hdr - 1) die("response headers too long");
                c->hdr[c->hlen++] = p[take++];
                if (c->hlen >= 4 && !memcmp(c->hdr + c->hlen - 4, "\r\n\r\n", 4)) { end = 1; break; }
            }
            p += take;
            n -= take;
            if (end) {
                c->hlen -= 2;  // keep one CRLF so the header loop ends
                parse_headers(c);
                if (c->chunked) { c->st = B_SIZE; c->size = 0; }
                else if (c->clen > 0) { c->st = B_LEN; c->rem = c->clen; }
                else { response_done(c); }
            }
            break;
        }
        case B_SIZE:
        case B_EXT: {
            char ch = *p++;
            n--;
            if (ch == '\n') {
                if (c->size == 0) { c->st = B_TRAILER; c->trailer_len = 0; }
                else { c->st = B_DATA; c->rem = c->size; }
            } else if (c->st == B_SIZE) {
                if (ch >= '0' && ch <= '9') c->size = c->size * 16 + (ch - '0');
                else if (ch >= 'a' && ch <= 'f') c->size = c->size * 16 + (ch - 'a' + 10);
                else if (ch >= 'A' && ch <= 'F') c->size = c->size * 16 + (ch - 'A' + 10);
                else if (ch != '\r') c->st = B_EXT;
            }
            break;
        }
        case B_DATA: {
            long take = n < c->rem ? n : c->rem;
            body_bytes(c, p, take, recv);
            p += take;
            n -= take;
            c->rem -= take;
            if (!c->rem) c->st = B_DCR;
            break;
        }
        case B_DCR:
        case B_DLF: {
            char ch = *p++;
            n--;
            if (ch == '\n') { c->st = B_SIZE; c->size = 0; }
            break;
        }
        case B_TRAILER: {
            char ch = *p++;
            n--;
            if (ch == '\n') {
                if (c->trailer_len == 0) response_done(c);
                c->trailer_len = 0;
            } else if (ch != '\r') {
                c->trailer_len++;
            }
            break;
        }
        case B_LEN: {
            long take = n < c->rem ? n : c->rem;
            body_bytes(c, p, take, recv);
            p += take;
            n -= take;
            c->rem -= take;
            if (!c->rem) response_done(c);
            break;
        }
        }
    }
}

static char rbuf[1 << 16];

static void on_event(conn_t *c, uint32_t ev) {
    if (c->connecting) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) die("connect (%s %d): %s", c->kind == K_CTRL ? "control" : "stream", c->idx, strerror(err));
        c->connecting = 0;
        ep_mod(c, EPOLLIN, EPOLL_CTL_MOD);
        if (c->wlen > c->woff) {
            int r = flush_w(c);
            if (r < 0) die("send: %s", strerror(errno));
            if (r > 0) ep_mod(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        }
        return;
    }
    if (ev & EPOLLOUT) {
        int r = flush_w(c);
        if (r < 0) die("send: %s", strerror(errno));
        if (r == 0) ep_mod(c, EPOLLIN, EPOLL_CTL_MOD);
    }
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        char cbuf[256];
        struct iovec iov = {.iov_base = rbuf, .iov_len = sizeof rbuf};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t r = recvmsg(c->fd, &mh, 0);
        double t = now_s();
        g_arrival = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); r > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                g_arrival = ts.tv_sec + ts.tv_nsec * 1e-9 - rt_minus_mono;
            }
        if (r > 0) {
            feed(c, rbuf, r, t);
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
            if (c->kind == K_STREAM) {
                stream_ends++;
                if (c->open) streams_open--;
                conn_close(c);
            } else {
                // Idle timeout on a control connection: reconnect, redo the job in flight.
                if (c->job == J_PUT || c->job == J_GET)
                    die("control connection %d closed during setup (%s)", c->idx, r == 0 ? "EOF" : strerror(errno));
                if (c->job == J_POST) {  // redo it on the new connection, same detent
                    sess[c->job_sess].inflight = 0;
                    sess[c->job_sess].toggle ^= 1;
                    posts--;
                    if (triggering) rq_push(c->job_sess);
                }
                c->job = J_NONE;
                conn_close(c);
                if (++ctrl_reconnects > 1000) die("too many control reconnects");
                conn_open(c);
            }
        }
    }
}

// ---------------------------------------------------------------- main

static void usage(void) {
    fprintf(stderr,
            "usage: stream-scale-client --port P --pid SHEETD_PID [--streams N] [--fps F] [--seconds S]\n"
            "       [--warmup W] [--controls C] [--preset fluid|facebook]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--port")) g_port = atoi(v);
        else if (!strcmp(a, "--pid")) g_pid = atoi(v);
        else if (!strcmp(a, "--streams")) g_n = atoi(v);
        else if (!strcmp(a, "--fps")) g_fps = atoi(v);
        else if (!strcmp(a, "--seconds")) g_seconds = atof(v);
        else if (!strcmp(a, "--warmup")) g_warmup = atof(v);
        else if (!strcmp(a, "--controls")) g_ctrl_n = atoi(v);
        else if (!strcmp(a, "--preset")) g_preset = v;
        else usage();
    }
    if (g_port <= 0 || g_pid <= 0 || g_n < 1 || g_fps < 1 || g_fps > 240 || g_seconds <= 0 || g_seconds > MAX_SECS)
        usage();
    if (!strcmp(g_preset, "facebook")) { g_det_a = "expanded"; g_det_b = "normal"; g_init = "normal"; }
    else if (strcmp(g_preset, "fluid")) usage();
    if (g_ctrl_n <= 0) g_ctrl_n = g_n / 16 < 4 ? 4 : (g_n / 16 > 128 ? 128 : g_n / 16);
    signal(SIGPIPE, SIG_IGN);

    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < (rlim_t)(g_n + g_ctrl_n + 64)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < (rlim_t)(g_n + g_ctrl_n + 64)) die("ulimit -n %ld is too low for %d streams", (long)rl.rlim_cur, g_n);
    }

    g_addr.sin_family = AF_INET;
    g_addr.sin_port = htons(g_port);
    g_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    ep = epoll_create1(EPOLL_CLOEXEC);
    streams = calloc(g_n, sizeof *streams);
    ctrls = calloc(g_ctrl_n, sizeof *ctrls);
    sess = calloc(g_n, sizeof *sess);
    ready = calloc(g_n, sizeof *ready);
    lat_cap = (size_t)(g_n * (double)g_fps * g_seconds * 1.25) + 1024;
    if (lat_cap > 200000000) lat_cap = 200000000;
    lat = malloc(lat_cap * sizeof *lat);
    lat_srv = malloc(lat_cap * sizeof *lat);
    lat_cli = malloc(lat_cap * sizeof *lat);
    rtt_cap = (size_t)(g_n * 4 * (g_seconds + g_warmup + 2)) + 1024;
    rtt = malloc(rtt_cap * sizeof *rtt);
    if (!streams || !ctrls || !sess || !ready || !lat || !lat_srv || !lat_cli || !rtt) die("out of memory");
    memset(lat, 0, lat_cap * sizeof *lat);  // touch it now, not during the window
    memset(lat_srv, 0, lat_cap * sizeof *lat);
    memset(lat_cli, 0, lat_cap * sizeof *lat);
    {  // REALTIME - MONOTONIC, from the tightest of a few bracketed reads
        double best = 1e300;
        for (int i = 0; i < 20; i++) {
            struct timespec a, r, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            clock_gettime(CLOCK_REALTIME, &r);
            clock_gettime(CLOCK_MONOTONIC, &b);
            double ma = a.tv_sec + a.tv_nsec * 1e-9, mb = b.tv_sec + b.tv_nsec * 1e-9;
            if (mb - ma < best) { best = mb - ma; rt_minus_mono = r.tv_sec + r.tv_nsec * 1e-9 - (ma + mb) / 2; }
        }
    }
    for (int i = 0; i < g_n; i++) {
        streams[i].fd = -1;
        streams[i].kind = K_STREAM;
        streams[i].idx = i;
        sess[i].anchor_id[0] = sess[i].anchor_id[1] = -1;
        sess[i].last_anim = -1;
    }
    for (int k = 0; k < g_ctrl_n; k++) {
        ctrls[k].kind = K_CTRL;
        ctrls[k].idx = k;
        ctrls[k].job = J_NONE;
        conn_open(&ctrls[k]);
    }

    double t_begin = now_s(), t_phase = t_begin, setup_deadline = t_begin + 120;
    double idle_cpu0 = 0, idle_self0 = 0, idle_t0 = 0;
    double idle_cpu = 0, idle_self = 0, idle_rss = 0, idle_dt = 1;
    double busy_cpu0 = 0, busy_self0 = 0;
    double busy_cpu = 0, busy_self = 0, busy_rss = 0, busy_dt = 1, busy_cpu_dt = 1, busy_t0 = 0, client_rss = 0;
    double next_sec = 0, next_watchdog = 0;
    struct epoll_event evs[512];
    const int max_connecting = 128;

    fprintf(stderr, "stream-scale-client: %d streams at %d fps, %d control connections, preset %s\n", g_n, g_fps,
            g_ctrl_n, g_preset);
    while (phase != P_DONE) {
        double t = now_s();
        // Phase transitions (every one bounded in time).
        switch (phase) {
        case P_CREATE:
            if (created == g_n) { phase = P_OPEN; fprintf(stderr, "  %d sessions created in %.2f s\n", g_n, t - t_phase); t_phase = t; }
            break;
        case P_OPEN:
            while (streams_started < g_n && streams_started - streams_open < max_connecting) {
                conn_t *c = &streams[streams_started];
                conn_open(c);
                queue_write(c, "GET /sessions/s%d/frames?fps=%d HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
                            streams_started, g_fps);
                streams_started++;
            }
            if (streams_open == g_n) {
                fprintf(stderr, "  %d streams open in %.2f s\n", g_n, t - t_phase);
                phase = P_OFFSET1;
                t_phase = t;
            }
            break;
        case P_OFFSET1:
        case P_OFFSET2:
            if (offset_samples >= OFFSET_SAMPLES) {
                fprintf(stderr, "  clock offset %.6f s +- %.1f us (best GET round trip %.1f us)\n", offset,
                        (offset_hi - offset_lo) / 2 * 1e6, best_rtt * 1e6);
                if (phase == P_OFFSET1) {
                    offset1 = offset;
                    offset1_rtt = best_rtt;
                    phase = P_IDLE;
                    idle_t0 = t;
                    idle_cpu0 = proc_cpu_s(g_pid);
                    idle_self0 = cpu_self_s();
                    idle_events = 0;
                } else {
                    phase = P_DONE;
                }
                t_phase = t;
            } else if (phase == P_OFFSET2 && t - t_phase > 10) {
                phase = P_DONE;  // the drift check is optional
            }
            break;
        case P_IDLE:
            if (t >= idle_t0 + g_seconds) {
                idle_dt = t - idle_t0;
                idle_cpu = proc_cpu_s(g_pid) - idle_cpu0;
                idle_self = cpu_self_s() - idle_self0;
                idle_rss = proc_rss_mb(g_pid);
                fprintf(stderr, "  idle: %.2f s, sheetd %.2f%% of one core, %ld events on the streams\n", idle_dt,
                        idle_cpu / idle_dt * 100, idle_events);
                phase = P_WARM;
                t_phase = t;
                triggering = 1;
                for (int i = 0; i < g_n; i++) rq_push(i);
                w0 = t + g_warmup;  // known now, so animations of the warm-up count their frames due later
                w1 = w0 + g_seconds;
            }
            break;
        case P_WARM:
            if (t >= w0) {
                phase = P_WINDOW;
                busy_cpu0 = proc_cpu_s(g_pid);
                busy_self0 = cpu_self_s();
                busy_t0 = t;
                read_tasks(g_pid, &tasks0);
                machine_cpu(&mach_busy0, &mach_total0);
                sec_cpu[0] = busy_cpu0;
                sec_cpu_n = 1;
                next_sec = w0 + 1;
                t_phase = t;
            }
            break;
        case P_WINDOW:
            if (t >= next_sec && sec_cpu_n <= MAX_SECS) {
                long backlog = 0;
                for (int i = 0; i < g_n; i++) {
                    int q = 0;
                    if (streams[i].fd >= 0 && ioctl(streams[i].fd, FIONREAD, &q) == 0) backlog += q;
                }
                sec_backlog[sec_cpu_n - 1] = backlog;
                sec_cpu[sec_cpu_n++] = proc_cpu_s(g_pid);
                next_sec += 1;
            }
            if (t >= w1) {
                busy_cpu_dt = t - busy_t0;
                busy_dt = w1 - w0;
                busy_cpu = proc_cpu_s(g_pid) - busy_cpu0;
                read_tasks(g_pid, &tasks1);
                machine_cpu(&mach_busy1, &mach_total1);
                busy_self = cpu_self_s() - busy_self0;
                busy_rss = proc_rss_mb(g_pid);
                client_rss = proc_rss_mb(0);
                triggering = 0;
                phase = P_DRAIN;
                t_phase = t;
            }
            break;
        case P_DRAIN: {
            int inflight = 0;
            for (int k = 0; k < g_ctrl_n; k++) inflight += ctrls[k].job != J_NONE;
            if ((t >= t_phase + 1.5 && !inflight) || t >= t_phase + 10) {
                phase = P_OFFSET2;
                offset_samples = 0;
                offset_hi = 1e300;
                offset_lo = -1e300;
                best_rtt = 1e300;
                t_phase = t;
            }
            break;
        }
        }
        if (phase < P_IDLE && t > setup_deadline)
            die("setup did not finish in 120 s: %d/%d sessions created, %d/%d streams open", created, g_n, streams_open,
                g_n);
        if (phase >= P_WARM && phase <= P_WINDOW && t >= next_watchdog) {
            // A session whose settled never came (stream gone, event lost): trigger it again.
            for (int i = 0; i < g_n; i++)
                if (!sess[i].inflight && !sess[i].queued && sess[i].last_resp > 0 && t - sess[i].last_resp > 3) {
                    watchdog++;
                    rq_push(i);
                    sess[i].last_resp = t;
                }
            next_watchdog = t + 0.25;
        }
        if (phase == P_IDLE || phase >= P_WARM) {
            if (streams_open < g_n && phase <= P_WINDOW)
                die("%d of %d streams ended during the run (%ld `closed` events)", g_n - streams_open, g_n, closed_n);
        }
        pump();
        if (phase == P_DONE) break;
        int n = epoll_wait(ep, evs, 512, phase == P_IDLE ? 50 : 5);
        if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
        double b0 = now_s();
        for (int k = 0; k < n; k++) on_event(evs[k].data.ptr, evs[k].events);
        if (phase == P_WINDOW && n > 0) {
            double b1 = now_s();
            int sec = (int)(b0 - w0);
            if (sec >= 0 && sec < MAX_SECS && b1 - b0 > sec_batch_max[sec]) sec_batch_max[sec] = b1 - b0;
        }
    }

    // ------------------------------------------------------------ results
    for (int i = 0; i < g_n; i++) frames_unanchored += sess[i].npend;
    size_t ns = 0, nc = 0;
    for (size_t i = 0; i < lat_n; i++) {
        if (!isnan(lat_srv[i])) lat_srv[ns++] = lat_srv[i];
        if (!isnan(lat_cli[i])) lat_cli[nc++] = lat_cli[i];
    }
    qsort(lat_srv, ns, sizeof *lat, cmp_float);
    qsort(lat_cli, nc, sizeof *lat, cmp_float);
    qsort(lat, lat_n, sizeof *lat, cmp_float);
    qsort(rtt, rtt_n, sizeof *rtt, cmp_float);
    double expected = (double)g_n * g_fps;
    double delivered = frames_window / busy_dt;
    double due = frames_due_window / busy_dt;
    double busy_frac = busy_time / (g_n * busy_dt);
    double lmin = lat_n ? lat[0] : NAN;
    float p50 = pct(lat, lat_n, 0.5), p99 = pct(lat, lat_n, 0.99), p999 = pct(lat, lat_n, 0.999),
          lmax = lat_n ? lat[lat_n - 1] : NAN;
    printf("idle: %d streams, %.1f s: sheetd CPU %.2f%% of one core, RSS %.1f MB; client CPU %.2f%%; %ld events on the streams\n",
           g_n, idle_dt, idle_cpu / idle_dt * 100, idle_rss, idle_self / idle_dt * 100, idle_events);
    printf("busy: %d streams at %d fps, %.1f s window after %.1f s warm-up, preset %s, %d control connections\n", g_n,
           g_fps, busy_dt, g_warmup, g_preset, g_ctrl_n);
    printf("  frames/s delivered %.0f (%.2f%% of those due), due by the animations' schedule %.0f; N x fps %.0f;"
           " streams animating %.1f%% of the time\n",
           delivered, due > 0 ? delivered / due * 100 : 0, due, expected, busy_frac * 100);
    printf("  lateness (ms, receive - due): p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  min %.3f  (%zu frames%s)\n", p50,
           p99, p999, lmax, lmin, lat_n, lat_n == lat_cap ? ", array full" : "");
    printf("    of which until the kernel had it (arrival - due): p50 %.3f  p99 %.3f  max %.3f;"
           " client read delay (read - arrival): p50 %.3f  p99 %.3f  max %.3f  (%zu frames timestamped)\n",
           pct(lat_srv, ns, 0.5), pct(lat_srv, ns, 0.99), ns ? lat_srv[ns - 1] : NAN, pct(lat_cli, nc, 0.5),
           pct(lat_cli, nc, 0.99), nc ? lat_cli[nc - 1] : NAN, ns);
    printf("  frames skipped inside animations %ld, first frames missed %ld, unanchored %ld, pending overflow %ld\n",
           frames_skipped, frames_start_missed, frames_unanchored, pend_overflow);
    printf("  POST /show: %ld sent (%.0f/s), round trip p50 %.3f p99 %.3f max %.3f ms, errors %ld, no animation %ld, "
           "watchdog re-triggers %ld\n",
           posts, posts / (busy_dt + g_warmup), pct(rtt, rtt_n, 0.5), pct(rtt, rtt_n, 0.99),
           rtt_n ? rtt[rtt_n - 1] : NAN, post_errors, posts_noanim, watchdog);
    printf("  events: settled %ld, interrupted %ld, closed %ld, keep-alives %ld, stream ends %ld, control reconnects %ld\n",
           settled_n, interrupted_n, closed_n, keepalives, stream_ends, ctrl_reconnects);
    printf("  sheetd CPU %.1f%% of one core, RSS %.1f MB; client CPU %.1f%% of one core, RSS %.1f MB\n",
           busy_cpu / busy_cpu_dt * 100, busy_rss, busy_self / busy_cpu_dt * 100, client_rss);
    printf("  clock offset before %.6f s (+-%.1f us), after %.6f s: drift %.1f us; server start later than POST send: %ld "
           "(>50 us), latest start %.3f ms after send\n",
           offset1, offset1_rtt * 5e5, offset, (offset - offset1) * 1e6, start_before_send, post_start_delay_max * 1e3);
    {
        double cores = (mach_total1 - mach_total0) / busy_cpu_dt, busy = (mach_busy1 - mach_busy0) / busy_cpu_dt * 100;
        printf("  machine: %.0f%% of %.0f cores' worth busy over the window: sheetd %.0f%%, client %.0f%%, everything else %.0f%%"
               " (of one core)\n",
               busy, cores, busy_cpu / busy_cpu_dt * 100, busy_self / busy_cpu_dt * 100,
               busy - (busy_cpu + busy_self) / busy_cpu_dt * 100);
    }
    printf("  sheetd threads, CPU %% of one core over the window:");
    for (int k = 0; k < tasks1.n; k++) {
        unsigned long long before = 0;
        for (int j = 0; j < tasks0.n; j++)
            if (tasks0.tid[j] == tasks1.tid[k]) before = tasks0.ticks[j];
        double pc = (double)(tasks1.ticks[k] - before) / sysconf(_SC_CLK_TCK) / busy_cpu_dt * 100;
        if (pc >= 0.5) printf(" %s(%d) %.1f", tasks1.name[k], tasks1.tid[k], pc);
    }
    printf("\n");
    printf("  per second: frames/s | lateness mean/max ms | sheetd CPU %% | client: longest batch ms, unread bytes at the tick\n");
    for (int s = 0; s < (int)busy_dt && s < MAX_SECS && s + 1 < sec_cpu_n; s++)
        printf("    %2d  %6ld | %7.3f / %8.3f | %5.1f | %6.2f %8ld\n", s, sec_frames[s],
               sec_lat_n[s] ? sec_lat_sum[s] / sec_lat_n[s] : NAN, sec_lat_max[s], (sec_cpu[s + 1] - sec_cpu[s]) * 100,
               sec_batch_max[s] * 1e3, sec_backlog[s]);
    printf("| idle | %d | %d | 0 | 0 | – | %.2f | %.2f | %.1f |\n", g_n, g_fps, idle_cpu / idle_dt * 100,
           idle_self / idle_dt * 100, idle_rss);
    printf("| busy (%s) | %d | %d | %.0f | %.0f (busy %.0f%%) | %.2f / %.2f / %.1f | %.1f | %.1f | %.1f |\n", g_preset, g_n,
           g_fps, delivered, expected, busy_frac * 100, p50, p99, lmax, busy_cpu / busy_cpu_dt * 100,
           busy_self / busy_cpu_dt * 100, busy_rss);
    for (int i = 0; i < g_n; i++) conn_close(&streams[i]);
    for (int k = 0; k < g_ctrl_n; k++) conn_close(&ctrls[k]);
    return 0;
}
