package io.auditpipe.flink;

import io.auditpipe.flink.baselines.BaselineSettings;
import io.auditpipe.flink.baselines.PrincipalBaselines;
import io.auditpipe.flink.baselines.ProfileSeeds;
import io.auditpipe.flink.chain.ServerOfEvent;
import io.auditpipe.flink.functions.EarlyFiringEventTimeTrigger;
import io.auditpipe.flink.functions.FloorWatermarks;
import io.auditpipe.flink.functions.HourlyCounts;
import io.auditpipe.flink.functions.TrustedEventTimeWatermarks;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.ParsedRecord;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * How {@link AuditPipeline} reads: the live job's unbounded topic ({@link Live}) or imported
 * history's bounded files ({@link History}, {@code auditpipe import}). Everything the graph does
 * differently for the two is decided here, once, from the sources it is given.
 */
sealed interface Reading {
    static Reading of(PipelineSources sources, Configuration options) {
        return sources.chain().<Reading>map(History::new).orElseGet(() -> new Live(options));
    }

    /** The imported chain every event is linked in; null for the live chain. */
    String chain();

    /** Event time and the watermark, from the records' own timestamps. */
    WatermarkStrategy<ParsedRecord> watermarks();

    /** {@code op} in the one reader's thread (history), or as the job's parallelism has it. */
    <T> SingleOutputStreamOperator<T> withTheReader(SingleOutputStreamOperator<T> op);

    /** The events by server, as the chain takes them. */
    KeyedStream<IngestedEvent, String> byServer(DataStream<IngestedEvent> events);

    /** A count window's firing: early and again for late events (live), or once at its end. */
    <T, K> WindowedStream<T, K, TimeWindow> windowed(WindowedStream<T, K, TimeWindow> w);

    /** How late an event may be and still be counted in its minute. */
    Duration statsLateness();

    /** Each server's hours from its minutes. */
    HourlyCounts hourlyCounts();

    /** The archive's writer, chained to the chain (live) or a thread of its own (history). */
    void archiveThread(DataStreamSink<IngestedEvent> archived);

    /**
     * The learned baselines: judging each event (live), or learning only, for the store (history).
     */
    PrincipalBaselines baselines(BaselineSettings settings, ProfileSeeds seeds);

    /** Whether the baselines are learned only, to be stored at the input's end. */
    boolean learnsOnly();

    /** The live job: records from the topic, unbounded, in Kafka's order per partition. */
    record Live(Configuration options) implements Reading {
        @Override
        public String chain() {
            return null;
        }

        /**
         * Trusted record times move the watermark, which trails the newest by the out-of-orderness.
         */
        @Override
        public WatermarkStrategy<ParsedRecord> watermarks() {
            Duration outOfOrderness = options.get(JobOptions.WATERMARK_OUT_OF_ORDERNESS);
            return WatermarkStrategy.<ParsedRecord>forGenerator(
                            context -> new TrustedEventTimeWatermarks(outOfOrderness))
                    .withTimestampAssigner((record, kafkaTimestamp) -> record.eventTimeMillis())
                    .withIdleness(options.get(JobOptions.WATERMARK_IDLENESS));
        }

        @Override
        public <T> SingleOutputStreamOperator<T> withTheReader(SingleOutputStreamOperator<T> op) {
            return op;
        }

        @Override
        public KeyedStream<IngestedEvent, String> byServer(DataStream<IngestedEvent> events) {
            return events.keyBy(new ServerOfEvent());
        }

        @Override
        public <T, K> WindowedStream<T, K, TimeWindow> windowed(
                WindowedStream<T, K, TimeWindow> w) {
            return w.allowedLateness(statsLateness())
                    .trigger(
                            new EarlyFiringEventTimeTrigger(
                                    options.get(JobOptions.STATS_EARLY_FIRE_INTERVAL)));
        }

        @Override
        public Duration statsLateness() {
            return options.get(JobOptions.STATS_ALLOWED_LATENESS);
        }

        @Override
        public HourlyCounts hourlyCounts() {
            return HourlyCounts.live(statsLateness());
        }

        /**
         * Chained to the chain, reading the document it built (IngestedEvent.document), with no
         * hand-over: 13% less of the job's CPU per event and 21% more events/s alone, at
         * parallelism 2 (bench/README.md "The archive chained to the chain").
         */
        @Override
        public void archiveThread(DataStreamSink<IngestedEvent> archived) {}

        @Override
        public PrincipalBaselines baselines(BaselineSettings settings, ProfileSeeds seeds) {
            return new PrincipalBaselines(settings, seeds);
        }

        @Override
        public boolean learnsOnly() {
            return false;
        }
    }

    /**
     * Imported history: one server's files, bounded, read in order by one reader, linked in the
     * chain {@code chain} and counted in documents of their own (the run's name in their ids).
     */
    record History(String chain) implements Reading {
        /**
         * The earliest time still to come in the files ({@link FloorWatermarks}): no record of a
         * bounded input is late, whatever its order.
         */
        @Override
        public WatermarkStrategy<ParsedRecord> watermarks() {
            return WatermarkStrategy.<ParsedRecord>forGenerator(context -> new FloorWatermarks())
                    .withTimestampAssigner((record, unused) -> record.eventTimeMillis());
        }

        /**
         * One split read in order: a second reader would get nothing, and until it finished (at a
         * checkpoint) its watermark would hold back every event-time timer, so the chain would
         * remember every id read meanwhile and forget them a minute at a time. What is chained to
         * the reader then has no hand-over (serialized) between them.
         */
        @Override
        public <T> SingleOutputStreamOperator<T> withTheReader(SingleOutputStreamOperator<T> op) {
            return op.setParallelism(1);
        }

        /**
         * One server read by one reader: its records are already where keyBy would send them (a
         * single subtask), and the chain runs in the reader's thread without a hand-over.
         */
        @Override
        public KeyedStream<IngestedEvent, String> byServer(DataStream<IngestedEvent> events) {
            return DataStreamUtils.reinterpretAsKeyedStream(events, new ServerOfEvent());
        }

        /**
         * Written once, when the watermark passes the window's end, which is when none of the
         * window's records is left to read: every record is counted, and each row can be an insert,
         * which the local store takes far faster than an upsert (docs/archive.md "Imported
         * history").
         */
        @Override
        public <T, K> WindowedStream<T, K, TimeWindow> windowed(
                WindowedStream<T, K, TimeWindow> w) {
            return w.trigger(EventTimeTrigger.create());
        }

        @Override
        public Duration statsLateness() {
            return Duration.ZERO;
        }

        @Override
        public HourlyCounts hourlyCounts() {
            return HourlyCounts.once(chain);
        }

        /**
         * A thread of its own: the reader and the chain share one, the archive takes the second
         * core.
         */
        @Override
        public void archiveThread(DataStreamSink<IngestedEvent> archived) {
            archived.disableChaining();
        }

        @Override
        public PrincipalBaselines baselines(BaselineSettings settings, ProfileSeeds seeds) {
            return PrincipalBaselines.learningOnly(settings, seeds);
        }

        @Override
        public boolean learnsOnly() {
            return true;
        }
    }
}
