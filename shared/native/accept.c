/*
 * Accepting on a listening socket at most N connections per readiness event, as Envoy's
 * TcpListenerImpl::onSocketEvent does with max_connections_to_accept_per_socket_event: libuv
 * (and so node:net) accepts until EAGAIN. The socket is polled level-triggered, so what is left
 * in the backlog is accepted at the next turn of the loop, after the other events of this one.
 */
#include "addon.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#define ACCEPT_MAGIC 0x61636370u /* "accp": an external made here, not another kind */

typedef struct {
  uint32_t magic;
  uv_poll_t poll;
  int fd;
  uint32_t max;
  int closing, closed, finalized;
  napi_env env;
  napi_ref callback;
  napi_async_context async;
} acceptor_t;

static void on_acceptor_closed(uv_handle_t *handle) {
  acceptor_t *a = (acceptor_t *)handle->data;
  close(a->fd);
  a->closed = 1;
  if (a->finalized) free(a);
}

static void acceptor_close_internal(acceptor_t *a) {
  if (a->closing) return;
  a->closing = 1;
  uv_poll_stop(&a->poll);
  napi_delete_reference(a->env, a->callback);
  napi_async_destroy(a->env, a->async);
  uv_close((uv_handle_t *)&a->poll, on_acceptor_closed);
}

static void on_acceptable(uv_poll_t *handle, int status, int events) {
  acceptor_t *a = (acceptor_t *)handle->data;
  if (a->closing || status < 0) return;
  napi_env env = a->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value fds;
  napi_create_array(env, &fds);
  uint32_t count = 0;
  int error = 0;
  while (count < a->max) {
    int fd = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      /* EAGAIN: the backlog is empty. Anything else (EMFILE, ENFILE, ENOBUFS): said once, tried again at the next event. */
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED) error = errno;
      if (errno == ECONNABORTED) continue;
      break;
    }
    napi_value v;
    napi_create_int32(env, fd, &v);
    napi_set_element(env, fds, count++, v);
  }
  if (count > 0 || error) {
    napi_value argv[2];
    argv[0] = fds;
    napi_create_int32(env, error, &argv[1]);
    call_back(env, a->async, a->callback, 2, argv);
  }
  napi_close_handle_scope(env, scope);
}

static void acceptor_finalize(napi_env env, void *data, void *hint) {
  acceptor_t *a = (acceptor_t *)data;
  a->finalized = 1;
  if (!a->closing) acceptor_close_internal(a); /* dropped without acceptClose() */
  else if (a->closed) free(a);
}

/* acceptOpen(fd, max, onAccept: (fds: number[], errno: number) => void) -> handle: polls the
 * listening socket `fd` (which it owns from now on, and closes) and accepts at most `max`
 * connections each time it is readable, handing their descriptors (non-blocking, close-on-exec)
 * over in one call. */
static napi_value accept_open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd;
  uint32_t max;
  napi_valuetype t;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_get_value_uint32(env, argv[1], &max) != napi_ok || max == 0 ||
      napi_typeof(env, argv[2], &t) != napi_ok || t != napi_function)
    return throw_type(env, "acceptOpen(fd, max, onAccept)");
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return throw_errno(env, "fcntl(O_NONBLOCK)", errno);
  acceptor_t *a = calloc(1, sizeof *a);
  a->magic = ACCEPT_MAGIC;
  a->fd = fd;
  a->max = max;
  a->env = env;
  napi_create_reference(env, argv[2], 1, &a->callback);
  napi_value name;
  napi_create_string_utf8(env, "proxy:accept", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &a->async);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_init(loop, &a->poll, fd);
  a->poll.data = a;
  uv_poll_start(&a->poll, UV_READABLE, on_acceptable);
  napi_value handle;
  napi_create_external(env, a, acceptor_finalize, NULL, &handle);
  return handle;
}

/* The acceptor a handle argument is, or NULL for anything else. */
static acceptor_t *acceptor_of(napi_env env, napi_value v) {
  void *p = NULL;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) == napi_ok && t == napi_external) napi_get_value_external(env, v, &p);
  acceptor_t *a = (acceptor_t *)p;
  return a && a->magic == ACCEPT_MAGIC ? a : NULL;
}

/* acceptClose(handle): stops polling and closes the listening socket. */
static napi_value accept_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  acceptor_t *a = argc >= 1 ? acceptor_of(env, argv[0]) : NULL;
  if (!a) return throw_type(env, "acceptClose(handle)");
  acceptor_close_internal(a);
  return NULL;
}

/* acceptPause(handle, paused): stops (or starts again) accepting, the socket staying open: what
 * comes meanwhile waits in the kernel's backlog, as Envoy's disabled listener leaves it
 * (the stop_accepting_connections overload action). */
static napi_value accept_pause(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  bool paused = false;
  acceptor_t *a = argc >= 2 ? acceptor_of(env, argv[0]) : NULL;
  if (!a || napi_get_value_bool(env, argv[1], &paused) != napi_ok) return throw_type(env, "acceptPause(handle, paused)");
  if (a->closing) return NULL;
  if (paused) uv_poll_stop(&a->poll);
  else uv_poll_start(&a->poll, UV_READABLE, on_acceptable);
  return NULL;
}

void define_accept(napi_env env, napi_value exports) {
  static const addon_function_t fns[] = {
      {"acceptOpen", accept_open},
      {"acceptClose", accept_close},
      {"acceptPause", accept_pause},
  };
  define_functions(env, exports, fns, sizeof fns / sizeof fns[0]);
}
