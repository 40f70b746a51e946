# Stand-in for the zstd-ruby gem, which Debian does not package. Fluentd v1.19 requires it at load
# time (lib/fluent/plugin/compressable.rb, extractor.rb) but uses it only for `compress zstd`,
# which the configs of cdk8s-sidecars never set. Any use fails loudly instead of compressing.
module Zstd
  def self.method_missing(name, *)
    raise NotImplementedError, "Zstd.#{name}: zstd-ruby is not installed (scripts/run-fluentd.sh runs Fluentd without it)"
  end

  def self.respond_to_missing?(*)
    false
  end

  class StreamingCompress
    def initialize(*)
      raise NotImplementedError, 'Zstd::StreamingCompress: zstd-ruby is not installed'
    end
  end

  class StreamingDecompress
    def initialize(*)
      raise NotImplementedError, 'Zstd::StreamingDecompress: zstd-ruby is not installed'
    end
  end
end
