# Loaded first by scripts/run-fluentd.sh (ruby -r): what Fluentd v1.19 expects of newer gems than
# Debian bookworm packages, for the one place that needs it. Fluentd's http_server helper (used by
# in_monitor_agent, the probes' endpoint) logs through Console::Output::Terminal
# (lib/fluent/log/console_adapter.rb, console >= 1.30); Debian's ruby-console 1.15 names the same
# logger Console::Terminal::Logger. Nothing else is changed: async 1.30 / async-http 0.59 serve
# the requests.
require 'console'

module Console
  module Output
    unless const_defined?(:Terminal, false)
      class Terminal < Console::Terminal::Logger
        LEVEL_TEXT = %w[debug info warn error fatal].freeze

        def initialize(stream, verbose: false, **options)
          @stream = stream
          super(stream, verbose: verbose, format: Console::Terminal::Text, **options)
        end
      end
    end
  end
end

# Fluentd v1.19 opens its socket manager as `ServerEngine::SocketManager::Server.open` with no path
# (lib/fluent/supervisor.rb `before_run`; serverengine >= 2.3 generates one); Debian's
# ruby-serverengine 2.2 takes the path as an argument and has `generate_path` for it.
require 'serverengine'
require 'serverengine/socket_manager'

if ServerEngine::SocketManager::Server.method(:open).arity == 1
  class << ServerEngine::SocketManager::Server
    alias_method :open_with_path, :open

    def open(path = nil)
      open_with_path(path || generate_path)
    end
  end
end
