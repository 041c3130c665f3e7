package io.auditpipe.flink.chain;

import io.auditpipe.flink.records.MutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * Where one server's chain stands ({@link ChainEvents}): its last link, the event it linked, when
 * the next head is due and the last time-to-forget timer set. One state value read and written once
 * per event: on RocksDB each state access is a lookup or a write of its own.
 */
public final class ChainTip implements Cloneable {
    /** {@link #headDueAt} and {@link #forgetTimerAt} when none is set. */
    public static final long NONE = Long.MIN_VALUE;

    public long seq;
    public String digest;
    public String lastEventId;
    public long lastEventTime;
    public long headDueAt = NONE;
    public long forgetTimerAt = NONE;

    /** Writes the fields in order; strings as Flink's {@code StringValue} does (null allowed). */
    public static final class Serializer extends MutableSerializer<ChainTip> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        Serializer() {
            super(ChainTip::new, SerializerSnapshot::new);
        }

        @Override
        public ChainTip copy(ChainTip from) {
            try {
                return (ChainTip) from.clone(); // longs and strings: a field-by-field copy
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void serialize(ChainTip t, DataOutputView target) throws IOException {
            target.writeLong(t.seq);
            StringValue.writeString(t.digest, target);
            StringValue.writeString(t.lastEventId, target);
            target.writeLong(t.lastEventTime);
            target.writeLong(t.headDueAt);
            target.writeLong(t.forgetTimerAt);
        }

        @Override
        public ChainTip deserialize(DataInputView source) throws IOException {
            ChainTip t = new ChainTip();
            t.seq = source.readLong();
            t.digest = StringValue.readString(source);
            t.lastEventId = StringValue.readString(source);
            t.lastEventTime = source.readLong();
            t.headDueAt = source.readLong();
            t.forgetTimerAt = source.readLong();
            return t;
        }
    }

    /** The serializer has no parameters: version 1 of this layout. */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<ChainTip> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
