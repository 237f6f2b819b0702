/* agent_node.h - which node the agent speaks for (agent_node.c). */
#ifndef DT_AGENT_NODE_H
#define DT_AGENT_NODE_H

#include <stddef.h>

#include "err.h"

/* The node name an agent reports for: given (--node-name), else $NODE_NAME
 * (what a DaemonSet sets from spec.nodeName), else the host name lower-cased
 * as kubelet names nodes, into buf when it is built there. NULL when it is
 * no Node name (a DNS-1123 subdomain), with err saying where it came from
 * and why: "--node-name \"Bad_Name\": a lowercase RFC 1123 subdomain ...". */
const char *agent_node_name(const char *given, char *buf, size_t len, struct dt_err *err);

#endif
