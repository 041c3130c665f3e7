package io.auditpipe.flink.chain;

import java.util.Iterator;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;

/**
 * What former layouts of {@link ChainEvents}' state kept, read once per server after a restore from
 * their checkpoints, moved over into the present layout and cleared: the chain's position as five
 * values, and the remembered ids in either of two maps. Their time-to-forget timers are restored
 * with the state and fire as before.
 */
final class FormerLayouts {
    private final ValueState<FirstCopies> firstCopies;
    private final MapState<String, Tuple2<Long, String>> firstCopyMap;
    private final ValueState<Long> seq;
    private final ValueState<String> digest;
    private final ValueState<String> eventId;
    private final ValueState<Long> eventTime;
    private final ValueState<Long> headDueAt;

    FormerLayouts(RuntimeContext context) {
        firstCopies =
                context.getState(
                        new ValueStateDescriptor<>(
                                "first-copies-hashed", FirstCopies.Serializer.INSTANCE));
        firstCopyMap =
                context.getMapState(
                        new MapStateDescriptor<>(
                                "first-copies",
                                Types.STRING,
                                Types.TUPLE(Types.LONG, Types.STRING)));
        seq = context.getState(new ValueStateDescriptor<>("chain-seq", Types.LONG));
        digest = context.getState(new ValueStateDescriptor<>("chain-digest", Types.STRING));
        eventId = context.getState(new ValueStateDescriptor<>("chain-last-event-id", Types.STRING));
        eventTime =
                context.getState(new ValueStateDescriptor<>("chain-last-event-time", Types.LONG));
        headDueAt = context.getState(new ValueStateDescriptor<>("chain-head-due-at", Types.LONG));
    }

    /**
     * The tip of a server without one: new, or where a former layout's chain stood; the ids a
     * former layout remembered are handed to {@code copies}.
     */
    ChainTip moveOver(FirstCopyFilter copies) throws Exception {
        ChainTip t = new ChainTip();
        Long formerSeq = seq.value();
        if (formerSeq != null) {
            t.seq = formerSeq;
            t.digest = digest.value();
            t.lastEventId = eventId.value();
            Long time = eventTime.value();
            t.lastEventTime = time == null ? 0 : time;
            Long due = headDueAt.value(); // its processing-time timer is restored with the state
            t.headDueAt = due == null ? ChainTip.NONE : due;
            seq.clear();
            digest.clear();
            eventId.clear();
            eventTime.clear();
            headDueAt.clear();
        }
        FirstCopies former = firstCopies.value();
        if (former != null) {
            former.forEach(
                    (high, low, line, forgetAt) ->
                            copies.rememberFormer(forgetAt, high, low, line));
            firstCopies.clear();
        }
        Iterator<Map.Entry<String, Tuple2<Long, String>>> map = firstCopyMap.iterator();
        if (map.hasNext()) {
            while (map.hasNext()) {
                Map.Entry<String, Tuple2<Long, String>> entry = map.next();
                copies.rememberFormer(entry.getValue().f0, entry.getKey(), entry.getValue().f1);
            }
            firstCopyMap.clear();
        }
        return t;
    }
}
