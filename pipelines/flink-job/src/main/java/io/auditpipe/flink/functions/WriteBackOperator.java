package io.auditpipe.flink.functions;

import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;

/**
 * A keyed process function's operator that lets the function keep values of its keyed state in
 * memory between checkpoints and write them into the state just before each snapshot of it.
 *
 * <p>For state read and written by every event of a few keys (a server's chain position, a record
 * sequence): on RocksDB every access is a lookup or a write, serialized, so writing a key's value
 * once per checkpoint instead of once per event takes that cost off each event (docs/scaling.md
 * "State"). Nothing is lost by it: a snapshot holds what the function wrote back before it, and
 * after a failure the job restores that snapshot and replays what came after it. The function must
 * read a key's value from its memory first (the state holds it only as of the last snapshot) and
 * forget what it wrote back, so that its memory holds only the keys of one checkpoint interval.
 */
public class WriteBackOperator<K, IN, OUT> extends KeyedProcessOperator<K, IN, OUT> {
    private static final long serialVersionUID = 1L;

    /** A function that keeps state values in memory until {@link #writeBack}. */
    public interface WritesBack<K> {
        /**
         * Writes each value kept in memory into keyed state (after {@code setKey} makes its key
         * current), and forgets them.
         */
        void writeBack(Consumer<K> setKey) throws Exception;
    }

    /**
     * Each key's value kept in {@code touched} into {@code state} (null: cleared), its key made
     * current first; then forgets them.
     */
    public static <K, V> void writeBack(Map<K, V> touched, ValueState<V> state, Consumer<K> setKey)
            throws Exception {
        for (Map.Entry<K, V> e : touched.entrySet()) {
            setKey.accept(e.getKey());
            if (e.getValue() == null) state.clear();
            else state.update(e.getValue());
        }
        touched.clear();
    }

    public <F extends KeyedProcessFunction<K, IN, OUT> & WritesBack<K>> WriteBackOperator(
            F function) {
        super(function);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void snapshotState(StateSnapshotContext context) throws Exception {
        ((WritesBack<K>) userFunction).writeBack(this::setCurrentKey);
        super.snapshotState(context);
    }
}
