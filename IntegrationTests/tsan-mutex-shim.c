// Tells ThreadSanitizer about Synchronization.Mutex's slow paths (IntegrationTests/tsan builds it). Each wrapper
// calls the toolchain's function (dlsym RTLD_NEXT) and adds the edge a pthread mutex would give.
// In a process without TSan (swift-test itself) the weak __tsan_* are null and nothing is added.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SWIFTCALL __attribute__((swiftcall))
#define SELF __attribute__((swift_context)) /* self: r13, as Swift passes it */

extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*lock_slow_t)(uint32_t, void *SELF);
typedef SWIFTCALL bool (*try_lock_slow_t)(void *SELF);
typedef SWIFTCALL void (*unlock_slow_t)(void *SELF);

static void *next_definition(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "tsan-mutex-shim: %s not found\n", name);
        abort();
    }
    return f;
}

SWIFTCALL void lock_slow(uint32_t selfId, void *SELF self) __asm__(LOCK_SLOW);
SWIFTCALL void lock_slow(uint32_t selfId, void *SELF self) {
    static lock_slow_t real;
    if (!real) real = (lock_slow_t)next_definition(LOCK_SLOW);
    real(selfId, self);
    if (__tsan_acquire) __tsan_acquire(self);
}

SWIFTCALL bool try_lock_slow(void *SELF self) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool try_lock_slow(void *SELF self) {
    static try_lock_slow_t real;
    if (!real) real = (try_lock_slow_t)next_definition(TRY_LOCK_SLOW);
    bool locked = real(self);
    if (locked && __tsan_acquire) __tsan_acquire(self);
    return locked;
}

SWIFTCALL void unlock_slow(void *SELF self) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlock_slow(void *SELF self) {
    static unlock_slow_t real;
    if (!real) real = (unlock_slow_t)next_definition(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(self);
    real(self);
}
