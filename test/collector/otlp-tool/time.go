package main

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func pcommonTime(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }
