/* SPDX-License-Identifier: MIT */
/**
 * @file link.c
 * The XDP driver's checks of its interface and options, and its error
 * messages (see xdp_drv.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xdp_drv.h"
#include "xdp_frame.h"
#include "homa_xsk.h"

/** Most queues one driver serves (its XSKMAP's size). */
#define MAX_QUEUES 256

/** homa_xdp_errno() - See xdp_drv.h. */
int homa_xdp_errno(const char *what, const char *ifname, int e)
{
	switch (e) {
	case EPERM:
	case EACCES:
		fprintf(stderr, "homa: the XDP driver needs CAP_NET_ADMIN and CAP_BPF to %s on %s "
			"(run as root or grant both capabilities)\n", what, ifname);
		return HOMA_EPERM;
	case EBUSY:
	case EEXIST:
		fprintf(stderr, "homa: cannot %s on %s: the interface already has an XDP program "
			"(another Homa XDP socket, or another program)\n", what, ifname);
		return HOMA_EADDRINUSE;
	case EOPNOTSUPP:
		fprintf(stderr, "homa: cannot %s on %s: its driver has no native XDP support\n",
			what, ifname);
		return HOMA_ENOTSUP;
	case ENOMEM:
		fprintf(stderr, "homa: cannot %s on %s: out of memory\n", what, ifname);
		return HOMA_ENOMEM;
	default:
		fprintf(stderr, "homa: cannot %s on %s: %s\n", what, ifname, strerror(e));
		return HOMA_EIO;
	}
}

/** rx_queues() - The receive queues @ifname reports through ethtool (1 if it says nothing). */
static uint32_t rx_queues(int fd, const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr = {0};
	uint32_t n;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return 1;
	n = ch.combined_count > ch.rx_count ? ch.combined_count : ch.rx_count;
	return n ? n : 1;
}

/**
 * read_link() - Fill @out from interface @ifname (index, MAC, MTU, queues).
 * Return: 0 or HOMA_EINVAL / HOMA_ENOTSUP with a message.
 */
static int read_link(int fd, const char *ifname, struct homa_xdp_link *out)
{
	struct ifreq ifr = {0};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	out->ifindex = (int)if_nametoindex(ifname);
	if (!out->ifindex || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "homa: XDP driver: no interface named '%s'\n", ifname);
		return HOMA_EINVAL;
	}
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		fprintf(stderr, "homa: XDP driver: %s is not an Ethernet interface\n", ifname);
		return HOMA_ENOTSUP;
	}
	memcpy(out->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		return HOMA_EINVAL;
	out->mtu = (uint32_t)ifr.ifr_mtu;
	out->queues = rx_queues(fd, ifname);
	return 0;
}

/** check_sizes() - Packets of @cfg fit @l's MTU and a UMEM frame, and the queue count is sane. */
static int check_sizes(const struct homa_driver_config *cfg, struct homa_xdp_link *l)
{
	bool v6 = cfg->bind.ss_family == AF_INET6;
	size_t hlen = homa_xdp_hlen(v6, cfg->xdp_raw), pkt = cfg->max_packet;
	size_t ip_len;

	if (v6 && pkt == 1500 - 28)  /* the default, which homa_driver_settings() lowers */
		pkt = 1500 - 48;
	ip_len = pkt + hlen - HOMA_XDP_ETH_HLEN;
	if (ip_len > l->mtu || pkt + hlen > HOMA_XSK_MAX_FRAME) {
		fprintf(stderr, "homa: XDP driver: %zu-byte Homa packets need an MTU of %zu "
			"(%s has %u) and must be at most %zu bytes\n", pkt, ip_len,
			cfg->ifname, l->mtu, HOMA_XSK_MAX_FRAME - hlen);
		return HOMA_EINVAL;
	}
	if (cfg->queues > l->queues || cfg->queues > MAX_QUEUES) {
		fprintf(stderr, "homa: XDP driver: %u queues asked, %s has %u\n", cfg->queues,
			cfg->ifname, l->queues);
		return HOMA_EINVAL;
	}
	if (cfg->queues)
		l->queues = cfg->queues;
	if (l->queues > MAX_QUEUES)
		l->queues = MAX_QUEUES;
	return 0;
}

/** homa_xdp_link_check() - See xdp_drv.h. */
int homa_xdp_link_check(const struct homa_driver_config *cfg, struct homa_xdp_link *out)
{
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (!cfg->ifname || !cfg->ifname[0] || strlen(cfg->ifname) >= IF_NAMESIZE) {
		fprintf(stderr, "homa: the XDP driver needs an interface name (ifname)\n");
		return HOMA_EINVAL;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HOMA_EIO;
	err = read_link(fd, cfg->ifname, out);
	close(fd);
	return err ? err : check_sizes(cfg, out);
}
