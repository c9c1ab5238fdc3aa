/*
 * The physical limit for scripts/bench: a minimal HTTP server on libmicrohttpd with sheetd's
 * threading settings that reads and drops every request body and answers 200 with a fixed JSON
 * body of --reply-bytes bytes (Content-Type: application/json), whatever the method and path.
 *
 *   bench-baseline [--port P] [--threads N] [--reply-bytes B]
 *
 * Defaults: port 0 (a free one), 1 thread, 163 bytes. Listens on 127.0.0.1 only and prints
 * "port <P>" on stdout once it listens; SIGTERM or SIGINT stops it.
 * As sheetd (Sources/MicroHTTP/Internals/Daemon.swift): MHD_USE_INTERNAL_POLLING_THREAD |
 * MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, MHD_OPTION_THREAD_POOL_SIZE only when N > 1,
 * connection timeout 30 s, connection memory limit 32 KiB. The handler never queues a response
 * on its first call (that would close the keep-alive connection in 0.9.75); it queues on the call
 * that follows the complete body, one response object per request (as a server with a dynamic
 * body must).
 *
 * Build: gcc -O2 -o bench-baseline Benchmarks/bench-baseline.c -lmicrohttpd
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *reply;
static size_t reply_length;
static int first_call_marker;

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    (void)cls, (void)url, (void)method, (void)version, (void)upload_data;
    if (*con_cls == NULL) { /* headers parsed: never answer here (keep-alive) */
        *con_cls = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { /* body bytes: read and drop */
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct MHD_Response *response =
        MHD_create_response_from_buffer(reply_length, reply, MHD_RESPMEM_PERSISTENT);
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return queued;
}

static long number(const char *flag, const char *text, long low, long high) {
    char *end = NULL;
    long value = text ? strtol(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || value < low || value > high) {
        fprintf(stderr, "bench-baseline: %s needs a number in %ld...%ld\n", flag, low, high);
        exit(2);
    }
    return value;
}

int main(int argc, char **argv) {
    long port = 0, threads = 1, bytes = 163;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0) port = number(argv[i], argv[i + 1], 0, 65535), i++;
        else if (strcmp(argv[i], "--threads") == 0) threads = number(argv[i], argv[i + 1], 1, 64), i++;
        else if (strcmp(argv[i], "--reply-bytes") == 0) bytes = number(argv[i], argv[i + 1], 16, 1 << 20), i++;
        else {
            fprintf(stderr, "usage: bench-baseline [--port P] [--threads N] [--reply-bytes B]\n");
            return 2;
        }
    }

    /* A valid JSON object of exactly `bytes` bytes: {"pad":"xxx…"} (10 bytes of frame). */
    reply_length = (size_t)bytes;
    reply = malloc(reply_length);
    if (reply == NULL) return 1;
    memset(reply, 'x', reply_length);
    memcpy(reply, "{\"pad\":\"", 8);
    memcpy(reply + reply_length - 2, "\"}", 2);

    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL); /* MHD's threads inherit the mask */
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &address},
        {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32 * 1024, NULL},
        {threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)port, NULL,
        NULL, handle, NULL, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "bench-baseline: MHD_start_daemon failed on 127.0.0.1 port %ld\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", info ? (unsigned)info->port : 0u);
    fflush(stdout);

    int received = 0;
    sigwait(&stop_signals, &received);
    MHD_stop_daemon(daemon);
    free(reply);
    return 0;
}
