// hiredis (Debian 12: libhiredis-dev 0.14.1), the C client of the optional Redis session store.
// Only RedisClient imports this module.
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
// <hiredis/hiredis.h> rather than <hiredis.h>: found without pkg-config's -I/usr/include/hiredis.
#include <hiredis/hiredis.h>

/*
 * redisGetReply without SIGPIPE.
 *
 * In a blocking context redisGetReply first writes the commands appended with
 * redisAppendCommandArgv, and hiredis 0.14.1 writes with write(2), not with
 * send(..., MSG_NOSIGNAL). Writing to a connection the server has closed
 * raises SIGPIPE, whose default action ends the process, and sheetd does not
 * ignore SIGPIPE process-wide. So SIGPIPE is blocked in the calling thread
 * for the call; one SIGPIPE the call raised is then consumed (the write itself
 * fails with EPIPE, which hiredis reports as an I/O error) and the thread's
 * signal mask restored. A SIGPIPE already pending before the call is left
 * alone. With nothing left to write (the later replies of a pipeline), the
 * call cannot raise SIGPIPE and goes straight to redisGetReply.
 *
 * Returns redisGetReply's result (REDIS_OK or REDIS_ERR); *error_number gets
 * the errno the call left (EAGAIN when a socket timeout expired).
 */
static inline int chiredis_get_reply(redisContext *context, void **reply, int *error_number)
{
    if (context->obuf == NULL || sdslen(context->obuf) == 0) {
        errno = 0;
        int result = redisGetReply(context, reply);
        *error_number = errno;
        return result;
    }
    sigset_t sigpipe, previous, pending;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, &previous);
    sigemptyset(&pending);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);

    errno = 0;
    int result = redisGetReply(context, reply);
    *error_number = errno;

    if (!was_pending) {
        sigemptyset(&pending);
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            struct timespec now = {0, 0};
            while (sigtimedwait(&sigpipe, NULL, &now) == -1 && errno == EINTR) {
            }
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return result;
}

#endif
