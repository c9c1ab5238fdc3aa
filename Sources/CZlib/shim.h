// zlib (Debian 12: zlib1g-dev 1.2.13), for gzip of the files sheetd serves, compressed once at
// start-up (SheetService's StaticFile). Only SheetService imports this module.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>
#endif
