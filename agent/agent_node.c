/* agent_node.c - the node name an agent speaks for (agent_node.h): the
 * option, the DaemonSet's $NODE_NAME, or the host name as kubelet would
 * name the node. Shared by `slices` and `run`. */
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent_node.h"
#include "topo.h"

/* The name and where it came from, unchecked. */
static const char *node_name_from(const char *given, char *buf, size_t len, const char **from)
{
	const char *env = getenv("NODE_NAME");

	*from = "--node-name";
	if (given)
		return given;
	*from = "$NODE_NAME";
	if (env && *env)
		return env;
	*from = "the host name";
	if (gethostname(buf, len) != 0 || !buf[0])
		return "node";
	buf[len - 1] = '\0';
	/* kubelet names a node after its host name, lower-cased */
	for (char *p = buf; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return buf;
}

const char *agent_node_name(const char *given, char *buf, size_t len, struct dt_err *err)
{
	const char *from, *name = node_name_from(given, buf, len, &from);

	return topo_node_name_check(from, name, err) ? NULL : name;
}
