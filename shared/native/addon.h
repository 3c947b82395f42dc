/*
 * What the addon's files share: the N-API and libuv headers, the helpers of helpers.c (how errors
 * are thrown, how JavaScript is called back), and each file's function that adds its part to the
 * module's exports (called by addon.c's init).
 */
#ifndef PROXY_ADDON_H
#define PROXY_ADDON_H

#define _GNU_SOURCE /* struct ucred, getrandom */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Throws an Error whose message names `syscall` and `err`'s text, with `code` (the errno name), `syscall` and `errno`. Returns NULL. */
napi_value throw_errno(napi_env env, const char *syscall, int err);
/* Throws a TypeError. Returns NULL. */
napi_value throw_type(napi_env env, const char *message);
/* A JS string into `buf` (NUL-terminated, cut at `size`); its length, or -1 if it is not a string. */
int get_string(napi_env env, napi_value v, char *buf, size_t size);
/* Calls `callback` with `argv` from the event loop (napi_make_callback, in the caller's handle scope): an exception it throws is the process's uncaught exception. */
void call_back(napi_env env, napi_async_context async, napi_ref callback, size_t argc, const napi_value *argv);
/* Defines the `count` functions of `fns` (name, function) on `exports`. */
typedef struct {
  const char *name;
  napi_callback fn;
} addon_function_t;
void define_functions(napi_env env, napi_value exports, const addon_function_t *fns, size_t count);

void define_sockets(napi_env env, napi_value exports);
void define_memory(napi_env env, napi_value exports);
void define_random(napi_env env, napi_value exports);
void define_tickers(napi_env env, napi_value exports);
void define_accept(napi_env env, napi_value exports);

#endif
