# auditpipe_mongo: fluent-plugin-mongo's `mongo` output for the direct path (mongo-direct.conf),
# with two changes that keep records from being lost or silently stored in the wrong place:
#
# - Before every chunk, when the output is configured `capped`, the collection is looked up
#   again: a missing one is created capped (the plugin's own get_collection, told to forget what
#   it cached), and one that exists but is not capped stops the output with an error, the chunk
#   kept in the buffer and retried. The plugin alone checks once at startup, so a collection
#   dropped while Fluentd runs came back uncapped by the next insert (MongoDB creates a missing
#   collection on insert), and the hot tier would grow without bound.
# - A failed insert is retried (the chunk stays in the buffer) unless every failure is a duplicate
#   key: a line read again after a restart has the same _id and is already stored. The plugin
#   alone logs a warning and drops the documents of any bulk write error.
# - Strings are made UTF-8 before they are encoded as BSON. Fluentd reads lines as bytes
#   (ASCII-8BIT); the plugin alone failed every chunk with Encoding::UndefinedConversionError at
#   the first byte over 127, an error Fluentd counts as unrecoverable: the chunk was dropped
#   (measured here, 20,000 records). A line that is not valid UTF-8 is kept byte for byte as BSON
#   binary in `original` (or a dead letter's `line`); in other fields its invalid bytes become U+FFFD.
#   A field without a value is left out, as the job leaves it out.
require 'fluent/plugin/out_mongo'

module Fluent
  module Plugin
    class AuditpipeMongoOutput < MongoOutput
      Fluent::Plugin.register_output('auditpipe_mongo', self)

      DUPLICATE_KEY = 11000

      def write(chunk)
        ensure_capped(format_collection_name(extract_placeholders(@collection, chunk))) if @collection_options[:capped]
        super
      end

      private

      def ensure_capped(name)
        forget_collection(name) # get_collection checks again, and creates a missing one capped
        found = @client.database.command(listCollections: 1, filter: { name: name }).first['cursor']['firstBatch'].first
        return if found.nil? || (found['options'] && found['options']['capped'])

        raise "collection #{name} exists but is not capped: not writing into it (the documents are kept in " \
              "Fluentd's buffer and retried). Rename or drop it; it is then created capped " \
              "(#{@collection_options[:size]} bytes)."
      end

      KEPT_AS_BYTES = %w[original line].freeze

      def utf8(value, key = nil)
        case value
        when String
          text = value.dup.force_encoding(Encoding::UTF_8)
          return text if text.valid_encoding?
          return BSON::Binary.new(value.b) if KEPT_AS_BYTES.include?(key)

          text.scrub("\uFFFD")
        when Hash # a field with no value is left out, as the job leaves it out
          value.each_with_object({}) { |(k, v), out| out[utf8(k)] = utf8(v, k) unless v.nil? }
        when Array then value.map { |v| utf8(v) }
        else value
        end
      end

      def operate(database, collection, records)
        records = records.map { |r| utf8(r) }
        get_collection(database, collection, @collection_options).insert_many(records, ordered: false)
        records
      rescue Mongo::Error::BulkWriteError => e
        errors = e.result['writeErrors'] || []
        others = errors.reject { |w| w['code'] == DUPLICATE_KEY }
        unless others.empty?
          raise "#{others.size} of #{records.size} documents were not stored (#{others.first['errmsg']}); the " \
                'chunk is kept and retried'
        end
        log.info "#{errors.size} of #{records.size} documents were stored before (the same _id): lines read again"
        records
      end
    end
  end
end
