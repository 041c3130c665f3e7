package io.auditpipe.flink;

import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsRow;

/** A collecting sink of each kind the job writes, each named after {@code tag}. */
final class Collected {
    final CollectingSink<IngestedEvent> events;
    final CollectingSink<IngestedEvent> evidence;
    final CollectingSink<StatsRow> stats;
    final CollectingSink<HourRow> hours;
    final CollectingSink<RollupRow> rollups;
    final CollectingSink<DeadLetter> deadLetters;
    final CollectingSink<io.auditpipe.flink.alerts.Alert> alerts;
    final CollectingSink<ChainHead> heads;

    Collected(String tag) {
        events = new CollectingSink<>("events-" + tag);
        evidence = new CollectingSink<>("evidence-" + tag);
        stats = new CollectingSink<>("stats-" + tag);
        hours = new CollectingSink<>("hours-" + tag);
        rollups = new CollectingSink<>("rollups-" + tag);
        deadLetters = new CollectingSink<>("dead-letters-" + tag);
        alerts = new CollectingSink<>("alerts-" + tag);
        heads = new CollectingSink<>("heads-" + tag);
    }

    /** The live job's sinks. */
    PipelineSinks.Builder live() {
        return PipelineSinks.builder()
                .events(events)
                .evidence(evidence)
                .stats(stats)
                .statsHourly(hours)
                .rollups(rollups)
                .deadLetters(deadLetters)
                .alerts(alerts)
                .chainHeads(heads);
    }

    /** Imported history's sinks: no alerts, no minute counts of their own. */
    PipelineSinks.Builder history() {
        return PipelineSinks.builder()
                .history()
                .evidence(evidence)
                .statsHourly(hours)
                .rollups(rollups)
                .deadLetters(deadLetters)
                .chainHeads(heads);
    }
}
