#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/*
 * Typed wrappers for the calls Swift cannot make directly.
 *
 * MHD_start_daemon and MHD_get_daemon_info are C-variadic, and Swift does not
 * import variadic functions. Options are therefore passed as data
 * (MHD_OPTION_ARRAY), and the option items that carry a callback are built
 * here so that the function pointer -> intptr_t cast happens in C, where it is
 * defined, instead of as an unsafeBitCast in Swift.
 */

/// The URI log callback: gets the raw request target before libmicrohttpd
/// splits off or unescapes anything; its result becomes the request's con_cls.
typedef void *(*cmhd_uri_log_callback)(void *cls, const char *uri,
                                       struct MHD_Connection *connection);

/// The unescape callback: rewrites `s` in place and returns its new length.
typedef size_t (*cmhd_unescape_callback)(void *cls,
                                         struct MHD_Connection *connection,
                                         char *s);

/// An option taking one integer (`unsigned int` or `size_t`; libmicrohttpd
/// reads it back from the `intptr_t` member with the right width).
static inline struct MHD_OptionItem
cmhd_option_value(enum MHD_OPTION option, intptr_t value)
{
  struct MHD_OptionItem item = { option, value, NULL };
  return item;
}

/// An option taking one pointer (e.g. MHD_OPTION_SOCK_ADDR).
static inline struct MHD_OptionItem
cmhd_option_pointer(enum MHD_OPTION option, void *pointer)
{
  struct MHD_OptionItem item = { option, 0, pointer };
  return item;
}

/// MHD_OPTION_NOTIFY_COMPLETED: function in `value`, closure in `ptr_value`.
static inline struct MHD_OptionItem
cmhd_option_notify_completed(MHD_RequestCompletedCallback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED,
                                 (intptr_t) callback, cls };
  return item;
}

/// MHD_OPTION_URI_LOG_CALLBACK: function in `value`, closure in `ptr_value`.
static inline struct MHD_OptionItem
cmhd_option_uri_log(cmhd_uri_log_callback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK,
                                 (intptr_t) callback, cls };
  return item;
}

/// MHD_OPTION_UNESCAPE_CALLBACK: function in `value`, closure in `ptr_value`.
static inline struct MHD_OptionItem
cmhd_option_unescape(cmhd_unescape_callback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_UNESCAPE_CALLBACK,
                                 (intptr_t) callback, cls };
  return item;
}

/// The terminator every option array must end with.
static inline struct MHD_OptionItem
cmhd_option_end(void)
{
  struct MHD_OptionItem item = { MHD_OPTION_END, 0, NULL };
  return item;
}

/// MHD_start_daemon with every option in `options` (terminated by
/// cmhd_option_end()). NULL on failure (errno is usually that of the failing
/// socket/bind/listen call).
static inline struct MHD_Daemon *
cmhd_start_daemon(unsigned int flags, uint16_t port,
                  MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
                  MHD_AccessHandlerCallback handler, void *handler_cls,
                  const struct MHD_OptionItem *options)
{
  return MHD_start_daemon(flags, port, accept_policy, accept_policy_cls,
                          handler, handler_cls,
                          MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The port the daemon's listen socket is bound to (the real one when 0 was
/// asked for); 0 if libmicrohttpd cannot say.
static inline uint16_t
cmhd_daemon_bind_port(struct MHD_Daemon *daemon)
{
  const union MHD_DaemonInfo *info =
    MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return (NULL == info) ? 0 : info->port;
}

/// The socket of a connection (-1 if libmicrohttpd cannot say): the non-variadic face of
/// MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD).
static inline int
cmhd_connection_fd(struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return (NULL == info) ? -1 : (int) info->connect_fd;
}

/// The connection's peer address (NULL when libmicrohttpd has none).
static inline const struct sockaddr *
cmhd_connection_client_address(struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return (NULL == info) ? NULL : info->client_addr;
}

#endif
