package io.auditpipe.flink;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.baselines.Profile;
import io.auditpipe.flink.baselines.ProfileSeeds;
import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sessions.Session;
import io.auditpipe.flink.stream.StreamMessage;
import io.auditpipe.flink.stream.StreamMessages;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.flink.api.connector.sink2.Sink;

/**
 * Where the pipeline writes, as one value. The store's seven outputs are required (a test that does
 * not look at one passes a discarding sink, saying so); the others are optional outputs, and an
 * absent one adds no operator to the graph. Built with {@link #builder()}, which names every
 * required sink left out. Imported history ({@link Builder#history()}) has no events sink (the
 * capped collection holds the newest minutes, not the past) and no alerts.
 */
public record PipelineSinks(
        Optional<Sink<IngestedEvent>> events,
        Sink<IngestedEvent> evidence,
        Optional<Sink<StatsRow>> stats,
        Sink<HourRow> statsHourly,
        Sink<RollupRow> rollups,
        Sink<DeadLetter> deadLetters,
        Optional<Sink<Alert>> alerts,
        Sink<ChainHead> chainHeads,
        Optional<Sink<DeadLetter>> deadLetterTopic,
        Optional<Sink<Alert>> alertTopic,
        Optional<Sink<Alert>> alertWebhook,
        Optional<Sink<ChainHead>> servers,
        Optional<Sink<ChainHead>> kafkaLag,
        Optional<Sink<Session>> sessions,
        Optional<Baselines> baselines,
        Optional<Archive> archive,
        Optional<EventStream> stream) {

    /**
     * The event stream (docs/stream.md): its formats and topics, and a sink for each operator that
     * writes to it, by the operator's name: each writes in Kafka transactions of its own (their ids
     * begin with it).
     */
    public record EventStream(
            StreamMessages.Settings settings, Function<String, Sink<StreamMessage>> sinkFor) {}

    /**
     * The archive's two outputs (docs/archive.md): events as Parquet, chain heads in its manifest.
     */
    public record Archive(Sink<IngestedEvent> events, Sink<ChainHead> chainHeads) {}

    /**
     * The principals' stored baselines (docs/alerts.md "Learned baselines"): where imported history
     * writes them, and where the live job looks up the seed of a principal it has no state of.
     */
    public record Baselines(Sink<Profile> profiles, ProfileSeeds seeds) {}

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private Sink<IngestedEvent> events;
        private Sink<IngestedEvent> evidence;
        private Sink<StatsRow> stats;
        private Sink<HourRow> statsHourly;
        private Sink<RollupRow> rollups;
        private Sink<DeadLetter> deadLetters;
        private Sink<Alert> alerts;
        private Sink<ChainHead> chainHeads;
        private Sink<DeadLetter> deadLetterTopic;
        private Sink<Alert> alertTopic;
        private Sink<Alert> alertWebhook;
        private Sink<ChainHead> servers;
        private Sink<ChainHead> kafkaLag;
        private Sink<Session> sessions;
        private Baselines baselines;
        private Archive archive;
        private EventStream stream;
        private boolean history;

        private Builder() {}

        /**
         * The sinks of imported history: events, alerts and one-minute counts are neither required
         * nor allowed.
         */
        public Builder history() {
            history = true;
            return this;
        }

        /** Every stored event: the first copy of each, linked into its server's chain. */
        public Builder events(Sink<IngestedEvent> s) {
            events = s;
            return this;
        }

        /** The stored events that are evidence of some kind (EvidenceKind), the same documents. */
        public Builder evidence(Sink<IngestedEvent> s) {
            evidence = s;
            return this;
        }

        /** The one-minute counts (not of imported history). */
        public Builder stats(Sink<StatsRow> s) {
            stats = s;
            return this;
        }

        /** Each server's counts per hour. */
        public Builder statsHourly(Sink<HourRow> s) {
            statsHourly = s;
            return this;
        }

        /** The daily rollups. */
        public Builder rollups(Sink<RollupRow> s) {
            rollups = s;
            return this;
        }

        /** Dead letters in the store. */
        public Builder deadLetters(Sink<DeadLetter> s) {
            deadLetters = s;
            return this;
        }

        /** Alerts in the store. */
        public Builder alerts(Sink<Alert> s) {
            alerts = s;
            return this;
        }

        /** Chain heads in the store. */
        public Builder chainHeads(Sink<ChainHead> s) {
            chainHeads = s;
            return this;
        }

        /** Optional: dead letters on a topic. */
        public Builder deadLetterTopic(Sink<DeadLetter> s) {
            deadLetterTopic = s;
            return this;
        }

        /** Optional: alerts on a topic. */
        public Builder alertTopic(Sink<Alert> s) {
            alertTopic = s;
            return this;
        }

        /** Optional: alerts to a webhook. */
        public Builder alertWebhook(Sink<Alert> s) {
            alertWebhook = s;
            return this;
        }

        /** Optional: each chain head updates its server's entry in the servers collection. */
        public Builder servers(Sink<ChainHead> s) {
            servers = s;
            return this;
        }

        /**
         * Optional: samples the job's consumer lag into the store, driven by the chain heads (one
         * subtask).
         */
        public Builder kafkaLag(Sink<ChainHead> s) {
            kafkaLag = s;
            return this;
        }

        /** Optional: the sessions (not of imported history). */
        public Builder sessions(Sink<Session> s) {
            sessions = s;
            return this;
        }

        /** Optional: the stored baselines, written by imported history, the live job's seeds. */
        public Builder baselines(Sink<Profile> profiles, ProfileSeeds seeds) {
            baselines = new Baselines(profiles, seeds);
            return this;
        }

        /** Optional: the archive. */
        public Builder archive(Sink<IngestedEvent> archivedEvents, Sink<ChainHead> archivedHeads) {
            archive = new Archive(archivedEvents, archivedHeads);
            return this;
        }

        /** Optional: the event stream (not of imported history). */
        public Builder stream(
                StreamMessages.Settings settings, Function<String, Sink<StreamMessage>> sinkFor) {
            stream = new EventStream(settings, sinkFor);
            return this;
        }

        /**
         * @throws IllegalStateException naming each required sink not given
         */
        public PipelineSinks build() {
            List<String> missing = new ArrayList<>();
            if (history
                    && (events != null
                            || alerts != null
                            || stats != null
                            || sessions != null
                            || stream != null)) {
                throw new IllegalStateException(
                        "imported history has no events sink, no alerts, no one-minute counts, no sessions"
                                + " and no event stream");
            }
            if (events == null && !history) missing.add("events");
            if (evidence == null) missing.add("evidence");
            if (stats == null && !history) missing.add("stats");
            if (statsHourly == null) missing.add("statsHourly");
            if (rollups == null) missing.add("rollups");
            if (deadLetters == null) missing.add("deadLetters");
            if (alerts == null && !history) missing.add("alerts");
            if (chainHeads == null) missing.add("chainHeads");
            if (archive != null && (archive.events() == null || archive.chainHeads() == null))
                missing.add("archive's two sinks");
            if (!missing.isEmpty()) {
                throw new IllegalStateException(
                        "the pipeline's sinks lack " + String.join(", ", missing));
            }
            return new PipelineSinks(
                    Optional.ofNullable(events),
                    evidence,
                    Optional.ofNullable(stats),
                    statsHourly,
                    rollups,
                    deadLetters,
                    Optional.ofNullable(alerts),
                    chainHeads,
                    Optional.ofNullable(deadLetterTopic),
                    Optional.ofNullable(alertTopic),
                    Optional.ofNullable(alertWebhook),
                    Optional.ofNullable(servers),
                    Optional.ofNullable(kafkaLag),
                    Optional.ofNullable(sessions),
                    Optional.ofNullable(baselines),
                    Optional.ofNullable(archive),
                    Optional.ofNullable(stream));
        }
    }
}
