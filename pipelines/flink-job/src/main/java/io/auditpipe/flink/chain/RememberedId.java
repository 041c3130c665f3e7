package io.auditpipe.flink.chain;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * One event id that a server's chain remembers ({@link ChainEvents}): when to forget it, then the
 * first 128 bits of the SHA-256 of the id ({@link FirstCopies.IdHasher}). The key of the
 * first-copies map, whose value is the fingerprint of the id's first line.
 *
 * <p>Written as three big-endian longs, time first: RocksDB keeps a key's map entries in the order
 * of their bytes, so the ids due to be forgotten come first when the map is iterated, and
 * forgetting reads only them ({@link ChainEvents}). Times are after 1970, so their bytes sort as
 * the numbers do.
 */
public record RememberedId(long forgetAt, long high, long low) {
    @Override
    public int hashCode() {
        return (int) (low ^ (low >>> 32)) * 31 + (int) (forgetAt ^ (forgetAt >>> 32));
    }

    @Override
    public String toString() {
        return Long.toHexString(high) + Long.toHexString(low) + "@" + forgetAt;
    }

    /** 24 bytes: the time to forget, then the id's two halves. */
    public static final class Serializer extends TypeSerializerSingleton<RememberedId> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();
        private static final int LENGTH = 3 * Long.BYTES;

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public RememberedId createInstance() {
            return new RememberedId(0, 0, 0);
        }

        @Override
        public RememberedId copy(RememberedId from) {
            return from;
        }

        @Override
        public RememberedId copy(RememberedId from, RememberedId reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return LENGTH;
        }

        @Override
        public void serialize(RememberedId r, DataOutputView target) throws IOException {
            target.writeLong(r.forgetAt);
            target.writeLong(r.high);
            target.writeLong(r.low);
        }

        @Override
        public RememberedId deserialize(DataInputView source) throws IOException {
            return new RememberedId(source.readLong(), source.readLong(), source.readLong());
        }

        @Override
        public RememberedId deserialize(RememberedId reuse, DataInputView source)
                throws IOException {
            return deserialize(source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            target.write(source, LENGTH);
        }

        @Override
        public TypeSerializerSnapshot<RememberedId> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    /** The serializer has no parameters: version 1 of this layout. */
    public static final class SerializerSnapshot
            extends SimpleTypeSerializerSnapshot<RememberedId> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
