// SPDX-License-Identifier: GPL-2.0
/*
 * libipt's own test sources (.ptt), assembled by ptt-assemble.py, through
 * libauxsample's two Intel PT decoders: the walker and libipt's block
 * decoder must agree in everything public (tests/pt-pair.c) on the whole
 * trace and on each of its prefixes that ends after a packet, as AUX
 * snippets end anywhere.  The packets are encoded with libipt's own
 * encoder (pt_enc_next()), as pttc encodes them, and read back with its
 * packet decoder.
 *
 * usage: ptt-compare DIR NAME...
 *   reads DIR/NAME.pkt, .img and .bin; prints 'PASS  ptt NAME: ...' or
 *   'FAIL  ptt NAME: ...' a source (scripts/run-tests' format).
 */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include "../../tools/lib/auxsample/tests/pt-pair.c"
#include "../../fuzz/unit-tests.h"

#define TRACE_MAX	(1 << 20)
#define PACKETS_MAX	4096
#define SECTIONS_MAX	16

struct section {
	uint64_t	vstart;
	uint64_t	offset;
	uint64_t	length;
};

struct image {
	uint8_t		*bin;
	size_t		size;
	struct section	sections[SECTIONS_MAX];
	unsigned int	nr;
};

static int read_image(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	const struct image *img = context;

	for (unsigned int i = 0; i < img->nr; i++) {
		const struct section *s = &img->sections[i];
		uint64_t n;

		if (addr < s->vstart || addr - s->vstart >= s->length)
			continue;
		n = s->length - (addr - s->vstart);
		if (n > size)
			n = size;
		if (s->offset + (addr - s->vstart) + n > img->size)
			return -1;
		memcpy(buf, img->bin + s->offset + (addr - s->vstart), n);
		return n;
	}
	return -1;
}

static void *read_file(const char *dir, const char *name, const char *ext, size_t *size)
{
	char path[4096];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*size = n;
	}
	return buf;
}

/* One .pkt line into @pkt; > 0: raw bytes of that many in @raw instead. */
static int parse_packet(const char *line, struct pt_packet *pkt, uint64_t *raw)
{
	char name[32];
	unsigned long long a = 0, b = 0, c = 0;
	int n = sscanf(line, "%31s %lli %lli %lli", name, &a, &b, &c);

	if (n < 1)
		return -EINVAL;
	memset(pkt, 0, sizeof(*pkt));
	if (!strncmp(name, "raw-", 4)) {
		*raw = a;
		return atoi(name + 4) / 8;
	}
	if (!strcmp(name, "psb"))
		pkt->type = ppt_psb;
	else if (!strcmp(name, "psbend"))
		pkt->type = ppt_psbend;
	else if (!strcmp(name, "pad"))
		pkt->type = ppt_pad;
	else if (!strcmp(name, "ovf"))
		pkt->type = ppt_ovf;
	else if (!strcmp(name, "stop"))
		pkt->type = ppt_stop;
	else if (!strcmp(name, "tnt") || !strcmp(name, "tnt64")) {
		pkt->type = name[3] ? ppt_tnt_64 : ppt_tnt_8;
		pkt->payload.tnt.bit_size = a;
		pkt->payload.tnt.payload = b;
	} else if (!strcmp(name, "tip") || !strcmp(name, "tip.pge") ||
		   !strcmp(name, "tip.pgd") || !strcmp(name, "fup")) {
		pkt->type = !strcmp(name, "tip") ? ppt_tip : !strcmp(name, "fup") ? ppt_fup :
			    name[6] == 'e' ? ppt_tip_pge : ppt_tip_pgd;
		pkt->payload.ip.ipc = a;
		pkt->payload.ip.ip = b;
	} else if (!strcmp(name, "mode.exec")) {
		pkt->type = ppt_mode;
		pkt->payload.mode.leaf = pt_mol_exec;
		pkt->payload.mode.bits.exec.csl = a == 64;
		pkt->payload.mode.bits.exec.csd = a == 32;
	} else if (!strcmp(name, "mode.tsx")) {
		pkt->type = ppt_mode;
		pkt->payload.mode.leaf = pt_mol_tsx;
		pkt->payload.mode.bits.tsx.intx = a;
		pkt->payload.mode.bits.tsx.abrt = b;
	} else if (!strcmp(name, "pip")) {
		pkt->type = ppt_pip;
		pkt->payload.pip.cr3 = a;
		pkt->payload.pip.nr = b;
	} else if (!strcmp(name, "tsc")) {
		pkt->type = ppt_tsc;
		pkt->payload.tsc.tsc = a;
	} else if (!strcmp(name, "cbr")) {
		pkt->type = ppt_cbr;
		pkt->payload.cbr.ratio = a;
	} else if (!strcmp(name, "tma")) {
		pkt->type = ppt_tma;
		pkt->payload.tma.ctc = a;
		pkt->payload.tma.fc = b;
	} else if (!strcmp(name, "mtc")) {
		pkt->type = ppt_mtc;
		pkt->payload.mtc.ctc = a;
	} else if (!strcmp(name, "cyc")) {
		pkt->type = ppt_cyc;
		pkt->payload.cyc.value = a;
	} else if (!strcmp(name, "vmcs")) {
		pkt->type = ppt_vmcs;
		pkt->payload.vmcs.base = a;
	} else if (!strcmp(name, "mnt")) {
		pkt->type = ppt_mnt;
		pkt->payload.mnt.payload = a;
	} else if (!strcmp(name, "exstop")) {
		pkt->type = ppt_exstop;
		pkt->payload.exstop.ip = a;
	} else if (!strcmp(name, "mwait")) {
		pkt->type = ppt_mwait;
		pkt->payload.mwait.hints = a;
		pkt->payload.mwait.ext = b;
	} else if (!strcmp(name, "pwre")) {
		pkt->type = ppt_pwre;
		pkt->payload.pwre.state = a;
		pkt->payload.pwre.sub_state = b;
		pkt->payload.pwre.hw = c;
	} else if (!strcmp(name, "pwrx")) {
		pkt->type = ppt_pwrx;
		pkt->payload.pwrx.last = a;
		pkt->payload.pwrx.deepest = b;
		pkt->payload.pwrx.interrupt = c == 0;
		pkt->payload.pwrx.store = c == 1;
		pkt->payload.pwrx.autonomous = c == 2;
	} else if (!strcmp(name, "ptw")) {
		pkt->type = ppt_ptw;
		pkt->payload.ptw.plc = a;
		pkt->payload.ptw.payload = b;
		pkt->payload.ptw.ip = c;
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * The trace of @text's packets into @buf, each packet's end into @ends.
 * Returns its length, or -1 with the reason in @why.
 */
static long encode(char *text, uint8_t *buf, size_t *ends, unsigned int *nr_ends,
		   unsigned int *nr_packets, char *why, size_t why_size)
{
	size_t len = 0;

	*nr_ends = 0;
	*nr_packets = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct pt_config config;
		struct pt_encoder *enc;
		struct pt_packet pkt;
		uint64_t raw = 0;
		int n = parse_packet(line, &pkt, &raw);

		if (n < 0 || *nr_ends >= PACKETS_MAX || len + 64 > TRACE_MAX) {
			snprintf(why, why_size, "'%s' is no packet", line);
			return -1;
		}
		if (n > 0) {
			/* Raw bytes, little-endian, as pttc writes them. */
			for (int i = 0; i < n; i++)
				buf[len++] = raw >> (8 * i);
		} else {
			pt_config_init(&config);
			config.begin = buf + len;
			config.end = buf + TRACE_MAX;
			enc = pt_alloc_encoder(&config);
			n = enc ? pt_enc_next(enc, &pkt) : -pte_nomem;
			pt_free_encoder(enc);
			if (n <= 0) {
				snprintf(why, why_size, "libipt's encoder refuses '%s': %s", line,
					 pt_errstr(pt_errcode(n)));
				return -1;
			}
			len += n;
			(*nr_packets)++;
		}
		ends[(*nr_ends)++] = len;
	}
	return len;
}

/* libipt's packet decoder reads @nr packets back, without an error. */
static int check_packets(uint8_t *buf, size_t len, unsigned int nr, char *why, size_t why_size)
{
	struct pt_packet_decoder *dec;
	struct pt_config config;
	struct pt_packet pkt;
	unsigned int seen = 0;
	int err;

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + len;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return -1;
	err = pt_pkt_sync_set(dec, 0);
	while (!err) {
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err >= 0) {
			seen++;
			err = 0;
		}
	}
	pt_pkt_free_decoder(dec);
	if (err != -pte_eos || seen != nr) {
		snprintf(why, why_size, "libipt's packet decoder reads %u of %u packets: %s",
			 seen, nr, pt_errstr(pt_errcode(err)));
		return -1;
	}
	return 0;
}

static int compare(const char *dir, const char *name)
{
	static uint8_t trace[TRACE_MAX];
	static size_t ends[PACKETS_MAX];
	struct image img = { .nr = 0 };
	struct auxsample_config config = {
		.size		= sizeof(config),
		.type		= AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory	= read_image,
		.context	= &img,
	};
	unsigned int nr_ends, nr_packets, bad = 0, walked = 0, decodes = 0;
	const struct auxsample_decode_error *errs;
	const struct auxsample_branch *br;
	int branches, errors;
	char why[256] = "";
	char *pkts, *sections;
	size_t size;
	struct pair pr;
	long len;

	pkts = read_file(dir, name, "pkt", &size);
	sections = read_file(dir, name, "img", &size);
	img.bin = read_file(dir, name, "bin", &img.size);
	if (!pkts || !sections || !img.bin) {
		printf("FAIL  ptt %s: not assembled\n", name);
		return 1;
	}
	for (char *line = strtok(sections, "\n"); line && img.nr < SECTIONS_MAX;
	     line = strtok(NULL, "\n")) {
		struct section *s = &img.sections[img.nr++];

		if (sscanf(line, "%" SCNi64 " %" SCNi64 " %" SCNi64, &s->vstart, &s->offset,
			   &s->length) != 3) {
			printf("FAIL  ptt %s: a section line reads '%s'\n", name, line);
			return 1;
		}
	}
	len = encode(pkts, trace, ends, &nr_ends, &nr_packets, why, sizeof(why));
	if (len < 0 || check_packets(trace, len, nr_packets, why, sizeof(why))) {
		printf("FAIL  ptt %s: %s\n", name, why);
		return 1;
	}
	if (pair__init(&pr, &config)) {
		printf("FAIL  ptt %s: no decoders\n", name);
		return 1;
	}
	/* Every prefix that ends after a packet, the whole trace last. */
	for (unsigned int i = 0; i < nr_ends; i++) {
		if (pair__compare(&pr, trace, ends[i], 64)) {
			fprintf(stderr, "  ptt %s: the first %zu bytes\n", name, ends[i]);
			bad++;
		}
	}
	decodes = pr.decodes;
	walked = pr.walked;
	/* What the whole trace gave: not nothing but errors, as a reader would see. */
	branches = auxsample_decoder__branches(pr.ref, &br);
	errors = auxsample_decoder__errors(pr.ref, &errs);
	pair__exit(&pr);
	if (bad)
		printf("FAIL  ptt %s: %u of %u prefixes decode otherwise with the walker\n",
		       name, bad, nr_ends);
	else
		printf("PASS  ptt %s: %zu bytes, %d branches, %d errors; %u prefixes alike, %u walked\n",
		       name, (size_t)len, branches, errors, decodes, walked);
	free(pkts);
	free(sections);
	free(img.bin);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: ptt-compare DIR NAME...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		failed |= compare(argv[1], argv[i]);
	return failed;
}
