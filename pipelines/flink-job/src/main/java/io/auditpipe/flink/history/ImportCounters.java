package io.auditpipe.flink.history;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What an import has read so far of a server's files, for its progress line and its summary. The
 * import runs its own embedded Flink in one JVM, one server's job at a time, with one reader and no
 * restarts ({@code ImportJob}), so these counts are exact: the reader counts each record once.
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
    public static final AtomicLong filesDone = new AtomicLong();
    private static final Map<String, LongAdder> reasons = new ConcurrentHashMap<>();

    /** Zero again, for the next server of a run (one job after another in the same JVM). */
    public static void reset() {
        for (AtomicLong c : new AtomicLong[] {records, deadLetters, alreadyPresent, framing, bytesRead, filesDone}) c.set(0);
        reasons.clear();
    }

    static void deadLetter(String reason) {
        deadLetters.incrementAndGet();
        String r = reason == null ? "(no reason)" : reason.length() > 160 ? reason.substring(0, 160) + "..." : reason;
        if (!reasons.containsKey(r) && reasons.size() >= REASONS) r = "(other reasons)";
        reasons.computeIfAbsent(r, k -> new LongAdder()).increment();
    }

    /** Dead letters by reason (the first {@value #REASONS} reasons apart). */
    public static Map<String, Long> reasons() {
        Map<String, Long> out = new TreeMap<>();
        reasons.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
