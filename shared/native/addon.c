/*
 * The proxy's one native addon (N-API, C): what Node's core cannot do. Built from every .c file
 * here into build/native.node by scripts/build-native.mjs; each file says what it holds:
 *
 *  - sockets.c: listening sockets made before bind, descriptors passed between processes
 *    (hot restart, listeners added after a worker's fork), sd_notify;
 *  - memory.c: files mapped shared by the whole tree (circuit breakers, rate-limit buckets,
 *    watchdog counters), and the C heap's free pages given back;
 *  - random.c: the kernel's CSPRNG;
 *  - tickers.c: timers on the event loop that run no JavaScript (the watchdogs' touches and looks);
 *  - accept.c: a listening socket accepting at most N connections per readiness event;
 *  - helpers.c: what they share (errors thrown, callbacks into JavaScript, functions defined).
 *
 * Errors are thrown as JS Errors with `code` (the errno name) and `syscall`, so JS can retry on
 * EAGAIN or ECONNREFUSED the way Envoy does.
 */
#include "addon.h"

static napi_value init(napi_env env, napi_value exports) {
  define_sockets(env, exports);
  define_memory(env, exports);
  define_random(env, exports);
  define_tickers(env, exports);
  define_accept(env, exports);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
