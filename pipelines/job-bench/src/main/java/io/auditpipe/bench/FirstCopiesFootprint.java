package io.auditpipe.bench;

import io.auditpipe.flink.chain.FirstCopies;
import io.auditpipe.parser.Digests;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * What {@code ChainEvents} keeps per remembered event id, in the heap and in a checkpoint, and what
 * a look-up and an insert cost: {@link FirstCopies} against the {@code MapState<String, Tuple2<Long,
 * String>>} it replaced (a HashMap of the same entries is what the heap state backend holds, and its
 * MapSerializer what a checkpoint writes). Ids look like Percona's ({@code <server>/<n>_<start>}),
 * digests are real SHA-256s. Heap is measured as the growth of the used heap after full GCs, so run
 * it alone. Prints {@code key=value} lines; used by bench/pipeline_bench.py; not a test.
 *
 * <p>Argument: how many ids (default 2,000,000).
 */
public final class FirstCopiesFootprint {
    private FirstCopiesFootprint() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        String[] ids = new String[n];
        String[] lines = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = "bench-e2e/" + (100_000_000 + i) + "_2026-11-24T06:00:00";
            lines[i] = Digests.sha256Hex(("line " + i).getBytes(StandardCharsets.UTF_8));
        }
        long forgetAt = 1_764_000_000_000L;
        TypeSerializer<Tuple2<Long, String>> tuple = tupleSerializer();
        MapSerializer<String, Tuple2<Long, String>> mapSerializer = new MapSerializer<>(StringSerializer.INSTANCE, tuple);

        // heap: each entry made of strings of its own (in the job only the state holds them)
        long base = usedHeap();
        Map<String, Tuple2<Long, String>> former = former(ids, lines, forgetAt, true);
        long formerHeap = usedHeap() - base;
        long formerBytes = serializedSize(mapSerializer, former);
        long t0 = System.nanoTime();
        Map<String, Tuple2<Long, String>> formerCopy = mapSerializer.copy(former);
        long formerCopyNanos = System.nanoTime() - t0;
        if (formerCopy.size() != n) throw new IllegalStateException("copy lost entries");
        formerCopy = null;
        former = null;
        base = usedHeap();
        FirstCopies copies = hashed(ids, lines, forgetAt);
        long heap = usedHeap() - base;
        long bytes = serializedSize(FirstCopies.Serializer.INSTANCE, copies);
        t0 = System.nanoTime();
        FirstCopies copy = FirstCopies.Serializer.INSTANCE.copy(copies);
        long copyNanos = System.nanoTime() - t0;
        if (copy.size() != n || copies.size() != n) throw new IllegalStateException("lost entries");
        copy = null;
        copies = null;

        // time per event (a look-up, then an insert): the second of two runs each
        former(ids, lines, forgetAt, false);
        t0 = System.nanoTime();
        former(ids, lines, forgetAt, false);
        long formerNanos = System.nanoTime() - t0;
        hashed(ids, lines, forgetAt);
        t0 = System.nanoTime();
        hashed(ids, lines, forgetAt);
        long nanos = System.nanoTime() - t0;

        System.out.printf("ids=%d%n", n);
        System.out.printf("former_heap_bytes_per_id=%.0f%nformer_checkpoint_bytes_per_id=%.0f%n"
                        + "former_ns_per_event=%.0f%nformer_copy_on_write_ms=%.0f%n",
                (double) formerHeap / n, (double) formerBytes / n, (double) formerNanos / n, formerCopyNanos / 1e6);
        System.out.printf("heap_bytes_per_id=%.0f%ncheckpoint_bytes_per_id=%.0f%nns_per_event=%.0f%n"
                        + "copy_on_write_ms=%.0f%n",
                (double) heap / n, (double) bytes / n, (double) nanos / n, copyNanos / 1e6);
    }

    private static Map<String, Tuple2<Long, String>> former(String[] ids, String[] lines, long forgetAt, boolean own) {
        Map<String, Tuple2<Long, String>> former = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            String id = own ? new String(ids[i].toCharArray()) : ids[i];
            if (!former.containsKey(id)) former.put(id, Tuple2.of(forgetAt, own ? new String(lines[i].toCharArray()) : lines[i]));
        }
        return former;
    }

    private static FirstCopies hashed(String[] ids, String[] lines, long forgetAt) {
        FirstCopies copies = new FirstCopies();
        FirstCopies.IdHasher hasher = new FirstCopies.IdHasher();
        for (int i = 0; i < ids.length; i++) {
            hasher.hash(ids[i]);
            if (copies.lineOf(hasher.high, hasher.low) == FirstCopies.NOT_SEEN) {
                copies.add(hasher.high, hasher.low, hasher.line(lines[i]), forgetAt);
            }
        }
        return copies;
    }

    @SuppressWarnings("unchecked")
    private static TypeSerializer<Tuple2<Long, String>> tupleSerializer() {
        return (TypeSerializer<Tuple2<Long, String>>) (TypeSerializer<?>)
                Types.TUPLE(Types.LONG, Types.STRING).createSerializer(new SerializerConfigImpl());
    }

    private static <T> long serializedSize(TypeSerializer<T> serializer, T value) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(1 << 20);
        serializer.serialize(value, out);
        return out.length();
    }

    private static long usedHeap() throws InterruptedException {
        Runtime r = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return r.totalMemory() - r.freeMemory();
    }
}
