// SPDX-License-Identifier: GPL-2.0
/*
 * perf record -A: AUX area sampling without hand-written groups.
 *
 * The kernel (Linux 5.5, PERF_SAMPLE_AUX) copies the tail of an AUX area
 * event's buffer into the samples of the events in its group, each event
 * asking for attr.aux_sample_size bytes; the AUX event must lead the
 * group.  -A makes that group from all the events of the command line:
 *
 *   perf record -Aintel_pt -e 'cycles,instructions,branch-misses' ls
 *   perf record -Aintel_pt -e 'sched:*' -a sleep 10
 *
 * Everything after the grouping (sizes and their limits, the AUX sample
 * bit, the AUX mmap, Intel PT's sample mode) is upstream's --aux-sample
 * machinery, which -A feeds through opts->auxtrace_sample_opts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <subcmd/parse-options.h>

#include "auxsample-record.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "evsel_config.h"
#include "parse-events.h"
#include "perf-sys.h"
#include "perf_api_probe.h"
#include "pmu.h"
#include "pmus.h"
#include "record.h"
#include "strbuf.h"

/* What -A knows of AUX area PMUs. */
struct aux_pmu_info {
	const char	*name;
	const char	*what;
	/* The kernel driver implements snapshot_aux (AUX area sampling). */
	bool		can_sample;
	/* Bytes a snippet needs to hold a sync point, 0 if unknown. */
	unsigned int	(*min_size)(struct perf_pmu *pmu, struct evsel *leader);
	/* What to do instead when it cannot be sampled. */
	const char	*instead;
	/*
	 * Instead, record the trace in full beside the sampled events, for
	 * the decoders to give each sample the trace window before it.
	 */
	bool		full_trace;
};

/* State between the option callback and auxsample_record__setup(). */
struct aux_group {
	const struct aux_pmu_info	*info;
	struct evsel			*leader;
	char				*spec;
	/*
	 * Points into -A's argument, which, like every option argument,
	 * lives as long as perf record: so does opts->auxtrace_sample_opts,
	 * which it becomes.
	 */
	const char			*size;
	bool				modifiers;
	bool				full_trace;
};

static unsigned int intel_pt_min_size(struct perf_pmu *pmu, struct evsel *leader);

static const struct aux_pmu_info aux_pmus[] = {
	{
		.name = "intel_pt", .what = "Intel Processor Trace",
		.can_sample = true, .min_size = intel_pt_min_size,
	},
	{
		.name = "cs_etm", .what = "CoreSight ETM/ETE",
		.instead =
			"record the trace in full (perf record -e cs_etm//u ...) or in snapshot mode (-S) and decode it with perf report or perf script --itrace",
		.full_trace = true,
	},
	{
		.name = "arm_spe", .what = "Arm Statistical Profiling Extension",
		.instead = "SPE samples by itself: perf record -e arm_spe// ...",
	},
	{
		.name = "intel_bts", .what = "Intel Branch Trace Store",
		.instead =
			"use intel_pt, or record intel_bts in full (perf record -e intel_bts//u ...)",
	},
};

static const struct aux_pmu_info *aux_pmu_info__find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(aux_pmus); i++) {
		if (!strcmp(aux_pmus[i].name, name))
			return &aux_pmus[i];
	}
	return NULL;
}

/* Intel PT sample mode uses psb_period=0 (a PSB every 2 KiB) unless told. */
static unsigned int intel_pt_min_size(struct perf_pmu *pmu, struct evsel *leader)
{
	struct evsel_config_term *chg = evsel__get_config_term(leader, CFG_CHG);
	__u64 mask = perf_pmu__format_bits(pmu, "psb_period");
	__u64 config = leader->core.attr.config;
	unsigned int val = 0, bit = 0;
	int topa_multiple_entries;

	if (!mask)
		return 0;
	/* Early hardware (single ToPA entries) has a PSB every 256 bytes. */
	if (perf_pmu__scan_file(pmu, "caps/topa_multiple_entries", "%d",
				&topa_multiple_entries) != 1 || !topa_multiple_entries)
		return 256;
	if (chg && (chg->val.cfg_chg & mask)) {
		for (int b = 0; b < 64; b++) {
			if (!(mask & (1ULL << b)))
				continue;
			if (config & (1ULL << b))
				val |= 1U << bit;
			bit++;
		}
	}
	return 1U << (val + 11);
}

static void aux_group__delete(struct aux_group *grp)
{
	if (!grp)
		return;
	free(grp->spec);
	free(grp);
}

/* Where AUX sampling hardware is missing, what can be done instead. */
#define AUX_PMU_MISSING_HINT \
	"Without it, 'perf auxsample simulate -- <command>' records the Intel PT AUX samples a user program would give, by single-stepping it.\n"

/* The PMUs of this machine, for error messages. */
static void pmus__names(struct strbuf *sb, bool aux_only)
{
	struct perf_pmu *pmu = NULL;
	bool first = true;

	while ((pmu = perf_pmus__scan(pmu)) != NULL) {
		if (aux_only && !pmu->auxtrace && !aux_pmu_info__find(pmu->name))
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : ", ", pmu->name);
		first = false;
	}
	if (first)
		strbuf_addstr(sb, "none");
}

static const struct aux_pmu_info *aux_pmu__pick(void)
{
	struct strbuf looked, aux, all;

	for (size_t i = 0; i < ARRAY_SIZE(aux_pmus); i++) {
		if (aux_pmus[i].can_sample && perf_pmus__find(aux_pmus[i].name))
			return &aux_pmus[i];
	}
	for (size_t i = 0; i < ARRAY_SIZE(aux_pmus); i++) {
		if (aux_pmus[i].full_trace && perf_pmus__find(aux_pmus[i].name))
			return &aux_pmus[i];
	}

	strbuf_init(&looked, 64);
	strbuf_init(&aux, 64);
	strbuf_init(&all, 256);
	for (size_t i = 0; i < ARRAY_SIZE(aux_pmus); i++) {
		if (aux_pmus[i].can_sample || aux_pmus[i].full_trace)
			strbuf_addf(&looked, "%s%s (%s)", looked.len ? ", " : "",
				    aux_pmus[i].name, aux_pmus[i].what);
	}
	pmus__names(&aux, /*aux_only=*/true);
	pmus__names(&all, /*aux_only=*/false);
	pr_err("-A: no AUX area PMU that supports sampling was found.\n"
	       "  Looked for: %s\n"
	       "  AUX area PMUs here: %s\n"
	       "  PMUs here: %s\n"
	       "AUX area sampling needs such hardware (Intel PT: Intel Broadwell or later, and not disabled by the hypervisor).\n"
	       AUX_PMU_MISSING_HINT,
	       looked.buf, aux.buf, all.buf);
	strbuf_release(&looked);
	strbuf_release(&aux);
	strbuf_release(&all);
	return NULL;
}

/*
 * Split "<pmu>[/<terms>/[<modifiers>]][,<size>]" into the AUX event's
 * string (@grp->spec) and the sample size: the size follows the last '/'
 * (terms may hold commas), or the PMU name when there are no terms.  No
 * PMU name means the machine's AUX area PMU that supports sampling.
 */
static int aux_group__parse_spec(struct aux_group *grp, const char *str)
{
	size_t pmu_len = strcspn(str, "/,");
	const char *rest = str + pmu_len, *comma = NULL;
	char name[64];
	int ret;

	if (pmu_len >= sizeof(name)) {
		pr_err("-A%s: PMU name too long\n", str);
		return -EINVAL;
	}
	scnprintf(name, sizeof(name), "%.*s", (int)pmu_len, str);

	if (*rest == '/') {
		const char *close = strrchr(rest, '/');

		if (!pmu_len || close == rest) {
			pr_err("-A%s: want <pmu>/<terms>/[<modifiers>][,<size>]\n", str);
			return -EINVAL;
		}
		comma = strchr(close, ',');
		grp->modifiers = (comma ? comma : close + strlen(close)) > close + 1;
	} else if (*rest == ',') {
		comma = rest;
	}
	if (comma && comma[1])
		grp->size = comma + 1;

	if (!pmu_len) {
		grp->info = aux_pmu__pick();
		if (!grp->info)
			return -ENOENT;
		ret = asprintf(&grp->spec, "%s//", grp->info->name);
	} else {
		grp->info = aux_pmu_info__find(name);
		if (*rest == '/')
			ret = asprintf(&grp->spec, "%.*s",
				       (int)(comma ? comma - str : (long)strlen(str)), str);
		else
			ret = asprintf(&grp->spec, "%s//", name);
	}
	return ret < 0 ? -ENOMEM : 0;
}

static int aux_group__check_pmu(struct aux_group *grp)
{
	const struct aux_pmu_info *info = grp->info;
	char name[64];

	scnprintf(name, sizeof(name), "%.*s", (int)strcspn(grp->spec, "/"), grp->spec);
	/* Sampled if the kernel can (a probe tells), else traced in full. */
	grp->full_trace = info && !info->can_sample && info->full_trace;
	if (info && !info->can_sample && !info->full_trace) {
		pr_err("-A%s: no kernel implements AUX area sampling for %s (%s) yet: its driver has no snapshot_aux.\n"
		       "Instead, %s.\n", name, info->name, info->what, info->instead);
		return -EOPNOTSUPP;
	}
	if (!perf_pmus__find(name)) {
		struct strbuf aux;

		strbuf_init(&aux, 64);
		pmus__names(&aux, /*aux_only=*/true);
		pr_err("-A%s: there is no '%s' PMU on this machine (AUX area PMUs here: %s).\n"
		       AUX_PMU_MISSING_HINT, name, name, aux.buf);
		strbuf_release(&aux);
		return -ENOENT;
	}
	return 0;
}

/* Parse the AUX area event into @evlist, at the option's position. */
static int aux_group__add_leader(struct aux_group *grp, struct evlist *evlist)
{
	int nr = evlist->core.nr_entries;
	struct parse_events_error err;
	struct evsel *leader;
	int ret;

	parse_events_error__init(&err);
	ret = parse_events(evlist, grp->spec, &err);
	if (ret) {
		parse_events_error__print(&err, grp->spec);
		pr_err("-A: cannot use '%s' as the AUX area event\n", grp->spec);
		goto out;
	}
	leader = evlist__last(evlist);
	if (evlist->core.nr_entries != nr + 1) {
		pr_err("-A: '%s' matches several PMUs: name one\n", grp->spec);
		ret = -EINVAL;
		goto out;
	}
	/* perf marks AUX PMUs by arch: know ours by name on any. */
	if (!evsel__is_aux_event(leader) && !grp->info) {
		struct strbuf aux;

		strbuf_init(&aux, 64);
		pmus__names(&aux, /*aux_only=*/true);
		pr_err("-A: %s is not an AUX area PMU (AUX area PMUs here: %s)\n",
		       leader->pmu ? leader->pmu->name : grp->spec, aux.buf);
		strbuf_release(&aux);
		ret = -EINVAL;
		goto out;
	}
	grp->leader = leader;
out:
	parse_events_error__exit(&err);
	return ret;
}

int auxsample_record__parse_opt(const struct option *opt, const char *str,
				int unset)
{
	struct evlist **evlistp = opt->value;
	struct record_opts *opts = opt->data;
	struct aux_group *grp;
	int ret;

	if (unset)
		return 0;
	if (opts->aux_group) {
		pr_err("-A may be given once: the hardware traces one AUX area event per CPU, so there is one AUX sampling group\n");
		return -EINVAL;
	}

	grp = zalloc(sizeof(*grp));
	if (!grp)
		return -ENOMEM;
	ret = aux_group__parse_spec(grp, str ?: "");
	if (!ret)
		ret = aux_group__check_pmu(grp);
	if (!ret)
		ret = aux_group__add_leader(grp, *evlistp);
	if (ret) {
		aux_group__delete(grp);
		return ret;
	}
	opts->aux_group = grp;
	return 0;
}

/* Free what -A parsed into @opts. */
void auxsample_record__exit(struct record_opts *opts)
{
	aux_group__delete(opts->aux_group);
	opts->aux_group = NULL;
}

static int aux_group__check_events(struct aux_group *grp, struct evlist *evlist)
{
	struct evsel *evsel;
	int sample_read = 0, n = 0;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel == grp->leader)
			continue;
		if (evsel__is_aux_event(evsel)) {
			pr_err("-A already adds %s as the one AUX area event, and the hardware traces one per CPU: remove %s from -e\n",
			       evsel__name(grp->leader), evsel__name(evsel));
			return -EINVAL;
		}
		sample_read += evsel->sample_read;
		n++;
	}
	/* ':S' makes the first event sample and the others be read with it. */
	if (sample_read && sample_read != n) {
		pr_err("-A: leader sampling (:S) applies to the whole AUX sampling group; put all events in one {...}:S group\n");
		return -EINVAL;
	}
	grp->leader->sample_read = sample_read != 0;
	return 0;
}

/* The AUX event first, then the others in their order, all in its group. */
static void aux_group__regroup(struct aux_group *grp, struct evlist *evlist)
{
	struct evsel *evsel, *tmp;
	LIST_HEAD(events);

	list_splice_init(&evlist->core.entries, &events);
	evlist->core.nr_entries = 0;
	list_del_init(&grp->leader->core.node);
	evlist__add(evlist, grp->leader);
	list_for_each_entry_safe(evsel, tmp, &events, core.node) {
		list_del_init(&evsel->core.node);
		evsel->core.nr_members = 0;
		zfree(&evsel->group_name);
		evlist__add(evlist, evsel);
	}
	perf_evlist__set_leader(&evlist->core);
}

/*
 * Trace what the sampled events count, no more: the RFC's "configured
 * similarly to the event that is being annotated with regards to
 * filtering".  Explicit modifiers in -A win.
 */
static void aux_group__set_filtering(struct aux_group *grp, struct evlist *evlist)
{
	struct perf_event_attr *attr = &grp->leader->core.attr;
	bool user = false, kernel = false, hv = false, user_only = false;
	struct evsel *evsel;

	if (grp->modifiers)
		return;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel == grp->leader)
			continue;
		user |= !evsel->core.attr.exclude_user;
		kernel |= !evsel->core.attr.exclude_kernel;
		hv |= !evsel->core.attr.exclude_hv;
		user_only |= evsel->core.attr.exclude_kernel;
	}
	attr->exclude_user = !user;
	attr->exclude_kernel = !kernel;
	attr->exclude_hv = !hv;
	if (user && kernel && user_only)
		pr_warning("-A: some events count kernel code, so %s traces it too; decoding the kernel parts of the samples needs --kcore or a vmlinux\n",
			   evsel__name(grp->leader));
}

static int aux_group__set_size(struct aux_group *grp, struct record_opts *opts)
{
	if (grp->size) {
		if (opts->auxtrace_sample_opts && strcmp(opts->auxtrace_sample_opts, grp->size)) {
			pr_err("-A gives the AUX sample size %s and --aux-sample %s: give one\n",
			       grp->size, opts->auxtrace_sample_opts);
			return -EINVAL;
		}
		opts->auxtrace_sample_opts = grp->size;
	} else if (!opts->auxtrace_sample_opts) {
		opts->auxtrace_sample_opts = "";	/* the PMU's default */
	}
	return 0;
}

/* A snippet smaller than the sync point period may hold nothing decodable. */
static int aux_group__check_size(struct aux_group *grp, struct evlist *evlist,
				 struct record_opts *opts)
{
	struct perf_pmu *pmu = grp->leader->pmu;
	unsigned int min = 0, size;
	struct evsel *evsel;
	char *end;

	if (grp->info && grp->info->min_size && pmu)
		min = grp->info->min_size(pmu, grp->leader);
	if (!min)
		return 0;

	size = strtoul(opts->auxtrace_sample_opts, &end, 0);
	if (*end) {
		pr_err("-A: bad AUX sample size '%s'\n", opts->auxtrace_sample_opts);
		return -EINVAL;
	}
	evlist__for_each_entry(evlist, evsel) {
		struct evsel_config_term *term = evsel__get_config_term(evsel, AUX_SAMPLE_SIZE);
		unsigned int sz = term ? term->val.aux_sample_size : size;

		if (evsel == grp->leader || !sz)
			continue;
		if (sz < min) {
			pr_err("-A: the AUX sample size of %s, %u bytes, is below the %s sync point (PSB) period of %u bytes: its snippets could hold nothing to decode from.\n"
			       "Ask for at least %u bytes, or a shorter period with -A%s/psb_period=N/.\n",
			       evsel__name(evsel), sz, grp->info->name, min, min,
			       grp->info->name);
			return -EINVAL;
		}
	}
	return 0;
}

static int aux_sampling__check_kernel(void)
{
	struct utsname uts;

	if (perf_can_aux_sample())
		return 0;
	pr_err("AUX area sampling needs Linux 5.5 or later (PERF_SAMPLE_AUX); this kernel, %s, does not have it.\n",
	       uname(&uts) ? "unknown" : uts.release);
	return -EOPNOTSUPP;
}

static void aux_group__describe(struct aux_group *grp, struct evlist *evlist,
				struct record_opts *opts)
{
	struct evsel *evsel;
	struct strbuf sb;

	if (verbose <= 0)
		return;
	strbuf_init(&sb, 256);
	evlist__for_each_entry(evlist, evsel) {
		if (evsel != grp->leader)
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", evsel__name(evsel));
	}
	pr_debug("AUX sampling group: %s leads %d events: %s; sample size %s\n",
		 evsel__name(grp->leader), grp->leader->core.nr_members - 1, sb.buf,
		 *opts->auxtrace_sample_opts ? opts->auxtrace_sample_opts : "default");
	strbuf_release(&sb);
}

/*
 * Whether the kernel takes PERF_SAMPLE_AUX from the AUX event's PMU: it
 * refuses a member's aux_sample_size at open time when the PMU has no
 * snapshot_aux, so open the two, as -A would, and see.
 */
static bool aux_group__kernel_samples(struct aux_group *grp)
{
	struct perf_event_attr aux = grp->leader->core.attr;
	struct perf_event_attr member = {
		.type		= PERF_TYPE_SOFTWARE,
		.size		= sizeof(member),
		.config		= PERF_COUNT_SW_TASK_CLOCK,
		.sample_period	= 1000000,
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_AUX,
		.aux_sample_size = 4096,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	int fd, member_fd;

	aux.size = sizeof(aux);
	aux.disabled = 1;
	aux.exclude_kernel = 1;
	aux.exclude_hv = 1;
	fd = sys_perf_event_open(&aux, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	member_fd = sys_perf_event_open(&member, 0, -1, fd, PERF_FLAG_FD_CLOEXEC);
	if (member_fd >= 0)
		close(member_fd);
	close(fd);
	return member_fd >= 0;
}

/*
 * No snapshot_aux: trace in full, with timestamps, beside the sampled
 * events, so that decoding can place each sample in the trace: in its
 * CPU's trace, which the sample must say, system wide or not.
 */
static int aux_group__setup_full_trace(struct aux_group *grp, struct evlist *evlist,
				       struct record_opts *opts)
{
	struct perf_pmu *pmu = grp->leader->pmu;
	__u64 timestamp = pmu ? perf_pmu__format_bits(pmu, "timestamp") : 0;

	if (!timestamp) {
		pr_err("-A%s: %s publishes no timestamp format: cannot place samples in its trace\n",
		       grp->info->name, grp->info->name);
		return -EINVAL;
	}
	grp->leader->core.attr.config |= timestamp;
	opts->sample_cpu = true;
	aux_group__set_filtering(grp, evlist);
	if (grp->size)
		pr_warning("-A%s: the trace is recorded in full; the window each sample gets (%s) is chosen when decoding\n",
			   grp->info->name, grp->size);
	pr_info("-A%s: this kernel has no AUX area sampling for %s (no snapshot_aux):\n"
		"recording its trace in full, with timestamps, beside the sampled events.\n"
		"Decode it with perf report, perf auxsample or perf script --itrace.\n",
		grp->info->name, grp->info->what);
	return 0;
}

int auxsample_record__setup(struct evlist *evlist, struct record_opts *opts)
{
	struct aux_group *grp = opts->aux_group;
	int ret;

	if (!grp)
		return 0;

	if (grp->full_trace && aux_group__kernel_samples(grp))
		grp->full_trace = false;
	ret = grp->full_trace ? 0 : aux_sampling__check_kernel();
	if (ret)
		goto out;
	ret = aux_group__check_events(grp, evlist);
	if (ret)
		goto out;

	/* With no other event, sample perf record's default one. */
	if (evlist->core.nr_entries == 1) {
		ret = parse_event(evlist, perf_event_paranoid_check(1) ? "cycles:P" : "cycles:Pu");
		if (ret) {
			pr_err("-A: cannot add the default event, cycles\n");
			goto out;
		}
	}

	if (grp->full_trace) {
		ret = aux_group__setup_full_trace(grp, evlist, opts);
		goto out;
	}
	aux_group__regroup(grp, evlist);
	aux_group__set_filtering(grp, evlist);
	ret = aux_group__set_size(grp, opts);
	if (!ret)
		ret = aux_group__check_size(grp, evlist, opts);
	if (!ret)
		aux_group__describe(grp, evlist, opts);
out:
	aux_group__delete(grp);
	opts->aux_group = NULL;
	return ret;
}
