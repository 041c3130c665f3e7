package io.auditpipe.flink;

import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;

/**
 * The input whose state each release keeps as test data ({@link ReleaseStateITCase}): two servers'
 * logs, {@link #PER_SERVER} records each, read by two readers, one server's log each. A release's
 * state is taken after each reader read the first {@link #BEFORE} records of its log; the release
 * after it reads the rest from that state. Part of what each release's state was made from:
 * changing a record changes what the state of an earlier release continues, so never change one.
 */
final class ReleaseInput {
    static final int PER_SERVER = 600;
    static final int RECORDS = 2 * PER_SERVER;

    /** Records of each log read before the state is taken. */
    static final int BEFORE = 300;

    /**
     * After the state is taken, db-01's collector sends the first lines of its log again (a restart
     * from an older saved position): lines 1 to {@value}, which the state says are stored.
     */
    static final int RESENT = 20;

    private ReleaseInput() {}

    static String server(long i) {
        return i < PER_SERVER ? "db-01" : "db-02";
    }

    /** Whether record {@code i} is read before the state is taken. */
    static boolean before(long i) {
        return i % PER_SERVER < BEFORE;
    }

    /**
     * Record {@code i}: line {@code n} of its server's log, over three minutes from {@link
     * Fixtures#T0}: a login in ten (every fifth of them failed), queries on its connection
     * otherwise; db-01's lines after the state first send its first {@link #RESENT} lines again.
     */
    static ParsedRecord record(long i) {
        String server = server(i);
        long n = i % PER_SERVER + 1;
        if (server.equals("db-01") && n > BEFORE && n <= BEFORE + RESENT) n -= BEFORE;
        long at = n * 180 / PER_SERVER;
        byte[] line =
                n % 10 == 1
                        ? Fixtures.connect(n, "app", n % 50 == 1 ? 1045 : 0, at)
                        : Fixtures.query(n, n % 3 == 0 ? "update" : "select", 0, at);
        return AuditRecordDeserializer.parse(
                Fixtures.key(server),
                line,
                new KafkaOrigin(
                        "audit.raw", (int) (i / PER_SERVER), i, Fixtures.T0.toEpochMilli()));
    }

    /** The records, each reader pausing after {@code perReader} of them; -1: no pause. */
    static DataGeneratorSource<ParsedRecord> source(int perReader) {
        return new DataGeneratorSource<>(
                i -> record(i),
                RECORDS,
                perReader < 0
                        ? RateLimiterStrategy.noOp()
                        : (RateLimiterStrategy<NumberSequenceSource.NumberSequenceSplit>)
                                parallelism -> new Pause(perReader),
                TypeInformation.of(ParsedRecord.class));
    }

    /** Gives {@code permits} records, then none until the job stops. */
    private static final class Pause
            implements RateLimiter<NumberSequenceSource.NumberSequenceSplit> {
        private int permits;

        Pause(int permits) {
            this.permits = permits;
        }

        @Override
        public CompletionStage<Void> acquire(int records) {
            permits -= records;
            return permits >= 0
                    ? CompletableFuture.completedFuture(null)
                    : new CompletableFuture<>();
        }
    }

    /** How long a run may take before the test gives up on it. */
    static final Duration PATIENCE = Duration.ofMinutes(2);
}
