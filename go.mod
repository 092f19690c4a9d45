module github.com/hitflow/hitflow

go 1.26.8
