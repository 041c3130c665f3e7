package io.auditpipe.flink.history;

import io.auditpipe.flink.records.DeadLetter;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What an import has read so far of a server's files, for its progress line and its summary. The
 * import runs its own embedded Flink in one JVM, one server's job at a time, with one reader and no
 * restarts ({@code ImportJob}), so these counts are exact: the reader counts each record once, and
 * the dead letters are counted where they are written, each once ({@link #deadLetter}: the
 * dead-letter sink, whatever stage made them; {@link #rejected}: documents the store refused).
 */
public final class ImportCounters {
    private ImportCounters() {}

    /** At most this many distinct dead-letter reasons are counted apart; the rest as one. */
    static final int REASONS = 20;

    public static final AtomicLong records = new AtomicLong();
    public static final AtomicLong deadLetters = new AtomicLong();
    public static final AtomicLong alreadyPresent = new AtomicLong();
    public static final AtomicLong framing = new AtomicLong();

    /** Bytes of the files read so far (as stored: compressed for gzip files). */
    public static final AtomicLong bytesRead = new AtomicLong();

    /** Bytes of the files read for their records' times before the import ({@code TimeFloors}). */
    public static final AtomicLong bytesScanned = new AtomicLong();

    public static final AtomicLong filesDone = new AtomicLong();
    private static final Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
    private static final Map<String, LongAdder> stages = new ConcurrentHashMap<>();

    /** Zero again, for the next server of a run (one job after another in the same JVM). */
    public static void reset() {
        for (AtomicLong c :
                new AtomicLong[] {
                    records,
                    deadLetters,
                    alreadyPresent,
                    framing,
                    bytesRead,
                    bytesScanned,
                    filesDone
                }) c.set(0);
        reasons.clear();
        stages.clear();
    }

    /**
     * A dead letter on its way to the store's dead-letter collection (the import's dead-letter
     * sink).
     */
    public static void deadLetter(DeadLetter d) {
        count(d.stage, d.reason);
    }

    /**
     * A document the store refused for good: its dead letter, of stage "store", is written by the
     * store's writer.
     */
    public static void rejected(String reason) {
        count(DeadLetter.STAGE_STORE, reason);
    }

    private static void count(String stage, String reason) {
        deadLetters.incrementAndGet();
        stages.computeIfAbsent(stage == null ? "(no stage)" : stage, k -> new LongAdder())
                .increment();
        String r =
                reason == null
                        ? "(no reason)"
                        : reason.length() > 160 ? reason.substring(0, 160) + "..." : reason;
        if (!reasons.containsKey(r) && reasons.size() >= REASONS) r = "(other reasons)";
        reasons.computeIfAbsent(r, k -> new LongAdder()).increment();
    }

    /** Dead letters by reason (the first {@value #REASONS} reasons apart). */
    public static Map<String, Long> reasons() {
        return sums(reasons);
    }

    /** Dead letters by stage (schemas/dead-letter.schema.json). */
    public static Map<String, Long> stages() {
        return sums(stages);
    }

    private static Map<String, Long> sums(Map<String, LongAdder> counts) {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
