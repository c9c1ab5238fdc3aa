// hiredis (Debian 12: libhiredis-dev 0.14.1), the C client of the optional Redis session store.
// Only RedisClient imports this module.
#include <hiredis.h>
