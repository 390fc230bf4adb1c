// net/ reports errors with the project's one error value, clickatron::Status
// (keyformat/status.h): ok(), or the message a user will see ("bad percent-encoding in
// query parameter 'key'", "127.0.0.1:1: connection refused"). Nothing in net/ throws.
#ifndef CLICKATRON_NET_STATUS_H_
#define CLICKATRON_NET_STATUS_H_

#include "keyformat/status.h"

namespace clickatron::net {

using clickatron::Status;

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_STATUS_H_
