package vm_test

import "github.com/airlock-dev/airlock/internal/image"

var imageSum = image.FileSHA256
