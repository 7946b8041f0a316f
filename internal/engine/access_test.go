package engine

import (
	"reflect"
	"testing"
)

// The engine's parts stay its own: a caller outside the package reaches
// them only through methods and Options, never a field, so the type can
// change inside without its callers changing.
func TestEngineHidesItsFields(t *testing.T) {
	typ := reflect.TypeFor[Engine]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			t.Errorf("Engine.%s is exported: unexport it and give callers a method or an Options field", f.Name)
		}
	}
}
