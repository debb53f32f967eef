// SPDX-License-Identifier: GPL-2.0
/*
 * A first pass over a full-trace file, for perf report's virtual LBR:
 * the trace buffers, the samples beside them, and each sample's window
 * (auxsample-window.h), before the tool sees the first event.
 */
#include <errno.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-config.h"
#include "auxsample-fulltrace.h"
#include "auxsample-place.h"
#include "auxsample-window.h"
#include "data.h"
#include "event.h"
#include "evsel.h"
#include "sample.h"
#include "session.h"
#include "tool.h"

/* What the first pass keeps. */
struct report_prepass {
	struct perf_tool		tool;
	struct auxsample_config		config;
	u64				pmu_type;
	bool				have_config;
	struct auxsample_fulltrace	*ft;
	struct auxsample_windows	*ws;
	/* samples without a CPU: where their threads ran */
	struct auxsample_place		*place;
	u64				unplaced;
};

static int prepass__auxtrace_info(struct perf_session *session, union perf_event *event)
{
	struct report_prepass *p = container_of(session->tool, struct report_prepass, tool);
	int err = auxsample_config__from_auxtrace_info(&p->config, session, event, &p->pmu_type);

	/* Not decoded: the main pass says so. */
	if (err == -EOPNOTSUPP || err == -AUXSAMPLE_ERR_NOT_BUILT)
		return 0;
	if (err)
		return err;
	p->have_config = true;
	auxsample_windows__time_conv(p->ws, event);
	return 0;
}

static s64 prepass__auxtrace(struct perf_session *session, union perf_event *event)
{
	struct report_prepass *p = container_of(session->tool, struct report_prepass, tool);

	return auxsample_fulltrace__queue(p->ft, session, event);
}

/* ETM: a CPU's trace format (raw or formatted), and its trace ID. */
static int prepass__aux(const struct perf_tool *tool, union perf_event *event,
			struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct report_prepass *p = container_of(tool, struct report_prepass, tool);

	auxsample_fulltrace__aux(p->ft, event, sample);
	return 0;
}

static int prepass__aux_output_hw_id(const struct perf_tool *tool, union perf_event *event,
				     struct perf_sample *sample,
				     struct machine *machine __maybe_unused)
{
	struct report_prepass *p = container_of(tool, struct report_prepass, tool);

	return auxsample_fulltrace__hw_id(p->ft, event, sample);
}

/* Where threads run, for the samples without a CPU. */
static int prepass__place(const struct perf_tool *tool, union perf_event *event,
			  struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct report_prepass *p = container_of(tool, struct report_prepass, tool);

	return auxsample_place__event(p->place, event, sample);
}

static int prepass__sample(const struct perf_tool *tool, union perf_event *event __maybe_unused,
			   struct perf_sample *sample, struct evsel *evsel,
			   struct machine *machine __maybe_unused)
{
	struct report_prepass *p = container_of(tool, struct report_prepass, tool);
	struct perf_sample placed = *sample;

	if (!p->have_config || sample->aux_sample.size || evsel->core.attr.type == p->pmu_type)
		return 0;
	/* In the trace of the CPU its thread ran on, if the sideband says. */
	if (!auxsample_place__has_cpu(evsel)) {
		placed.cpu = auxsample_place__cpu(p->place, sample);
		if (placed.cpu == (u32)-1)
			p->unplaced++;
	}
	return auxsample_windows__add(p->ws, &placed, evsel, NULL);
}

static void report_prepass__init_tool(struct report_prepass *p)
{
	perf_tool__init(&p->tool, /*ordered_events=*/true);
	p->tool.sample = prepass__sample;
	p->tool.id_index = perf_event__process_id_index;
	p->tool.auxtrace_info = prepass__auxtrace_info;
	p->tool.auxtrace = prepass__auxtrace;
	p->tool.aux = prepass__aux;
	p->tool.aux_output_hw_id = prepass__aux_output_hw_id;
	p->tool.itrace_start = prepass__place;
	p->tool.context_switch = prepass__place;
}

int auxsample_windows__first_pass(struct perf_session *session, size_t max_bytes,
				  auxsample_window_fn fn, void *context,
				  struct auxsample_windows **wsp, u64 *unplaced)
{
	struct report_prepass p = {};
	struct perf_data data = {
		.path = session->data->path,
		.mode = PERF_DATA_MODE_READ,
	};
	struct perf_session *ps;
	int err = -ENOMEM;

	report_prepass__init_tool(&p);
	p.ft = auxsample_fulltrace__new();
	p.ws = auxsample_windows__new(max_bytes);
	p.place = auxsample_place__new();
	if (!p.ft || !p.ws || !p.place)
		goto out;
	ps = perf_session__new(&data, &p.tool);
	if (IS_ERR(ps)) {
		err = PTR_ERR(ps);
		goto out;
	}
	err = perf_session__process_events(ps);
	if (!err && p.have_config && auxsample_windows__nr_samples(p.ws) &&
	    auxsample_fulltrace__has_trace(p.ft))
		err = auxsample_windows__run(p.ws, p.ft, ps, fn, context);
	perf_session__delete(ps);
	if (!err) {
		*wsp = p.ws;
		p.ws = NULL;
		*unplaced = p.unplaced;
	}
out:
	auxsample_fulltrace__delete(p.ft);
	auxsample_windows__delete(p.ws);
	auxsample_place__delete(p.place);
	auxsample_config__exit(&p.config);
	return err;
}
